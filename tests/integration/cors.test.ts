import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_ROUTES } from "@/app/api-routes";
import { methodTableFromOpenApi, methodTableFromRoutes } from "@/lib/http/front-door";
import { buildOpenApiDocument } from "@/lib/http/openapi/document";
import { seedSignedInAccount } from "../helpers/factories";
import { startRouteServer, type RouteServer } from "../helpers/route-server";
import { seedBuyer } from "../helpers/router-factories";

/**
 * The CORS policy (lib/http/front-door.ts): a page on another origin (a browser-based agent holding an API key) may
 * call the bearer-key and public API; the routes of the session cookie (the dashboard's) are same-origin only, and
 * nothing is ever allowed with credentials. Asserted on the headers a browser decides by, through the real front door.
 */
const AGENT_PAGE = "https://agent.example";
let server: RouteServer;

beforeAll(async () => {
  server = await startRouteServer();
});

afterAll(async () => {
  await server.stop();
});

function preflight(path: string, method: string, headers = "authorization, content-type, x-stainless-os") {
  return fetch(`${server.url}${path}`, {
    method: "OPTIONS",
    headers: { origin: AGENT_PAGE, "access-control-request-method": method, "access-control-request-headers": headers },
  });
}

describe("CORS", () => {
  it("lets another origin's page call the inference API with a bearer key, and read every answer", async () => {
    const pre = await preflight("/v1/chat/completions", "POST");
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
    expect(pre.headers.get("access-control-allow-headers")).toBe("Authorization, *");
    expect(pre.headers.get("access-control-allow-credentials")).toBeNull();

    const { key } = await seedBuyer(5_000_000n);
    const answered = await fetch(`${server.url}/v1/key`, { headers: { origin: AGENT_PAGE, authorization: `Bearer ${key}` } });
    expect(answered.status).toBe(200);
    expect(answered.headers.get("access-control-allow-origin")).toBe("*");
    expect(answered.headers.get("access-control-expose-headers")).toBe("*"); // X-Request-Id, X-Svc-*, Retry-After…
    expect(answered.headers.get("access-control-allow-credentials")).toBeNull();

    // Errors too: the page can read why (here: no key), which a browser would otherwise hide behind a network error.
    const refused = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { origin: AGENT_PAGE, "content-type": "application/json" },
      body: JSON.stringify({ model: "llama-3.3-70b", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");

    const models = await fetch(`${server.url}/v1/models`, { headers: { origin: AGENT_PAGE } });
    expect(models.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("keeps the session cookie's routes same-origin: no CORS headers on their preflight or their answers", async () => {
    for (const [path, method] of [
      ["/v1/account/api-keys", "POST"],
      ["/v1/account/api-keys", "GET"],
      ["/v1/supply/offers", "POST"],
      ["/v1/x402/top-up", "POST"],
      ["/auth/verify", "POST"],
      ["/auth/session", "GET"],
    ]) {
      const pre = await preflight(path, method);
      expect(pre.headers.get("access-control-allow-origin"), `${method} ${path}`).toBeNull();
    }
    const account = await seedSignedInAccount();
    const listed = await fetch(`${server.url}/v1/account/api-keys`, { headers: { origin: AGENT_PAGE, cookie: account.cookie } });
    expect(listed.status).toBe(200); // served (a browser would not send the cookie cross-site) but unreadable to the page
    expect(listed.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("adds nothing to same-origin requests (no Origin header)", async () => {
    const res = await fetch(`${server.url}/v1/models`);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("is read from the routes' own auth, and the OpenAPI description's security says the same", () => {
    const doc = buildOpenApiDocument(API_ROUTES) as unknown as { paths: Record<string, Record<string, unknown>> };
    const fromRoutes = methodTableFromRoutes(API_ROUTES);
    const fromDescription = methodTableFromOpenApi(doc);
    const paths = Object.keys(doc.paths).map((template) => template.replace(/\{[^}]+\}/g, "x"));
    for (const path of paths) expect(fromRoutes.crossOrigin(path), path).toEqual(fromDescription.crossOrigin(path));
    expect(fromRoutes.crossOrigin("/v1/chat/completions")).toEqual(["POST"]);
    expect(fromRoutes.crossOrigin("/auth/verify")).toEqual([]);
  });
});
