/**
 * The front door (lib/http/front-door.ts), in front of the real routes over real HTTP as server/main.ts puts it
 * in front of Next: client IPs from X-Forwarded-For read from the right past TRUST_PROXY_HOPS, 405 with Allow for
 * every method a route does not serve (TRACE included), and the production security headers.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { isDeepStrictEqual } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { API_ROUTES } from "@/app/api-routes";
import { POST as createChatCompletion } from "@/app/v1/chat/completions/route";
import { createApiKey } from "@/lib/auth/api-keys";
import { frontDoor, methodTableFromOpenApi, methodTableFromRoutes } from "@/lib/http/front-door";
import { securityHeaders } from "@/lib/http/security-headers";
import { publicRpcUrl } from "@/lib/env";
import { buildOpenApiDocument } from "@/lib/http/openapi/document";
import { DIRECT_ROUTES } from "@/server/direct-routes";
import { seedSignedInAccount } from "../helpers/factories";
import { startRouteServer, type RouteServer } from "../helpers/route-server";

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** node:http rather than fetch: fetch refuses to send TRACE at all. */
function send(url: string, method: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const servers: RouteServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe("methods a route does not serve", () => {
  it("get 405 method_not_allowed with Allow on every described route, TRACE and unknown methods included", async () => {
    const server = await startRouteServer();
    servers.push(server);
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    let checked = 0;
    for (const [template, item] of Object.entries(doc.paths)) {
      const path = template.replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000");
      const served = Object.keys(item).map((m) => m.toUpperCase());
      for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "TRACE", "PROPFIND"].filter((m) => !served.includes(m))) {
        const res = await send(`${server.url}${path}`, method);
        expect(res.status, `${method} ${path}`).toBe(405);
        const allow = String(res.headers.allow).split(", ");
        expect(allow, `${method} ${path}`).toEqual(expect.arrayContaining([...served, "OPTIONS"]));
        expect(allow).not.toContain(method);
        expect(JSON.parse(res.body)).toEqual({
          error: { message: expect.stringContaining(method), type: "invalid_request_error", code: "method_not_allowed" },
        });
        expect(res.body).not.toMatch(/at .*\.ts|Error:/); // no stack trace
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(60);
    // What a route serves still reaches it.
    expect((await send(`${server.url}/v1/models`, "GET")).status).toBe(200);
  });

  it("come from a table built from the route list that answers as one built from the OpenAPI description", () => {
    const doc = buildOpenApiDocument(API_ROUTES) as unknown as { paths: Record<string, Record<string, unknown>> };
    const fromRoutes = methodTableFromRoutes(API_ROUTES);
    const fromDescription = methodTableFromOpenApi(doc);
    const id = "00000000-0000-4000-8000-000000000000";
    const paths = [
      ...Object.keys(doc.paths).flatMap((template) => [template.replace(/\{[^}]+\}/g, id), template.replace(/\{[^}]+\}/g, "a/b")]),
      ...["/", "/market/llama", "/docs", "/v1", "/v1/nope", "/v1/a/b/c", "/v1/account/api-keys/x/y", "/healthz/x", "/auth/other"],
    ];
    expect(paths.length).toBeGreaterThan(60);
    for (const path of paths) {
      expect(fromRoutes.allowed(path), path).toEqual(fromDescription.allowed(path));
      expect(fromRoutes.template(path), path).toEqual(fromDescription.template(path));
    }
    expect(fromRoutes.allowed("/v1/account/api-keys/abc")).toEqual(["DELETE", "OPTIONS", "PATCH"]);
    expect(fromRoutes.template("/v1/chat/completion%73")).toBe("/v1/{path}");
  });
});

describe("client IPs for per-IP limits", () => {
  async function limitedServer(hops: string) {
    vi.resetModules();
    vi.stubEnv("TRUST_PROXY_HOPS", hops);
    vi.stubEnv("RATE_LIMIT_PER_IP_PER_MINUTE", "3");
    const { startRouteServer: start } = await import("../helpers/route-server");
    const server = await start();
    servers.push(server);
    return (forwardedFor?: string) =>
      send(
        `${server.url}/auth/nonce?walletAddress=0x70997970C51812dc3A010C7d01b50e0d17dc79C8`,
        "GET",
        forwardedFor ? { "x-forwarded-for": forwardedFor } : {},
      );
  }

  it("with no trusted proxy (TRUST_PROXY_HOPS=0) are the socket peer: a made-up X-Forwarded-For is not a new bucket", async () => {
    const ask = await limitedServer("0");
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await ask(`198.51.100.${i}`)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect((await ask()).status).toBe(429); // and no header at all is the same client
  });

  it("behind one proxy (TRUST_PROXY_HOPS=1) are the entry that proxy appended, whatever the client wrote before it", async () => {
    const ask = await limitedServer("1");
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await ask(`10.9.9.${i}, 203.0.113.7`)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    // Another client behind the same proxy has its own bucket.
    expect((await ask("203.0.113.8")).status).toBe(200);
  });
});

describe("security headers", () => {
  it("are set on every answer in production: CSP with frame-ancestors 'none', HSTS on https, Referrer-Policy, nosniff", async () => {
    const headers = securityHeaders({ production: true, secure: true, publicRpcUrl });
    const server = await startRouteServer({ headers });
    servers.push(server);
    for (const [method, path] of [
      ["GET", "/v1/models"],
      ["GET", "/v1/nope"],
      ["TRACE", "/healthz"],
    ]) {
      const res = await send(`${server.url}${path}`, method);
      expect(res.headers["content-security-policy"], path).toMatch(/frame-ancestors 'none'/);
      expect(res.headers["content-security-policy"]).toContain(new URL(publicRpcUrl).origin);
      expect(res.headers["strict-transport-security"]).toMatch(/^max-age=\d+/);
      expect(res.headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["x-frame-options"]).toBe("DENY");
    }
  });

  it("leave HSTS out over http and everything out outside production", () => {
    expect(securityHeaders({ production: true, secure: false, publicRpcUrl })["strict-transport-security"]).toBeUndefined();
    expect(securityHeaders({ production: false, secure: true, publicRpcUrl })).toEqual({});
  });
});

// Last in the file: its requests count in 127.0.0.1's per-IP window, which the limit tests above start empty.
describe("the completion route served by the front door itself (no Next in front of it)", () => {
  it("answers exactly POST /v1/chat/completions with the route's own handler; everything else still reaches the app", async () => {
    const reachedApp: string[] = [];
    const methods = methodTableFromOpenApi({ paths: { "/v1/chat/completions": { post: {} } } });
    const app = (req: { method?: string; url?: string }, res: { statusCode: number; end: (body: string) => void }) => {
      reachedApp.push(`${req.method} ${req.url}`);
      res.statusCode = 299;
      res.end("app");
    };
    const server: Server = createServer(
      frontDoor(app as never, { methods, direct: { "POST /v1/chat/completions": createChatCompletion } }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const buyer = await seedSignedInAccount();
      const { key } = await createApiKey(buyer.id, { name: "front door" });
      const json = { "content-type": "application/json", authorization: `Bearer ${key}` };

      // The route's own answers, in the API's error shape, with its request id.
      const unauthenticated = await send(`${url}/v1/chat/completions`, "POST", { "content-type": "application/json" }, "{}");
      expect(unauthenticated.status).toBe(401);
      expect(JSON.parse(unauthenticated.body).error.code).toBe("missing_credentials");
      expect(unauthenticated.headers["x-request-id"]).toMatch(/^req_/);
      const streaming = await send(`${url}/v1/chat/completions`, "POST", json, JSON.stringify({ model: "m", messages: [], stream: true }));
      expect(JSON.parse(streaming.body).error.code).toBe("stream_not_supported");
      // The body limit holds when the front door reads the body, for a chunked one too (no Content-Length to refuse by).
      const huge = Buffer.alloc(3_000_000, 0x20);
      const tooLarge = await send(`${url}/v1/chat/completions`, "POST", { ...json, "transfer-encoding": "chunked" }, huge);
      expect(tooLarge.status).toBe(413);
      expect(JSON.parse(tooLarge.body).error.code).toBe("payload_too_large");
      // The body the front door read is the one the route checks: bytes that are not UTF-8 are refused, not replaced.
      const notUtf8 = await send(`${url}/v1/chat/completions`, "POST", json, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]));
      expect(notUtf8.status).toBe(400);
      expect(JSON.parse(notUtf8.body).error.code).toBe("invalid_json");
      expect(reachedApp).toEqual([]);

      // Other methods get the table's 405; another spelling of the path and other paths go to the app.
      expect((await send(`${url}/v1/chat/completions`, "GET")).status).toBe(405);
      expect((await send(`${url}/v1/chat/completions/`, "POST", json, "{}")).status).toBe(299);
      expect((await send(`${url}/v1/models`, "GET")).status).toBe(299);
      expect(reachedApp).toEqual(["POST /v1/chat/completions/", "GET /v1/models"]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("the cached market reads served by the production front door itself (server/direct-routes.ts)", () => {
  it("answers them with the routes' own handlers, exactly as those answer, query included; other methods and paths reach the app", async () => {
    const reachedApp: string[] = [];
    const app = (req: { method?: string; url?: string }, res: { statusCode: number; end: (body: string) => void }) => {
      reachedApp.push(`${req.method} ${req.url}`);
      res.statusCode = 299;
      res.end("app");
    };
    const server: Server = createServer(frontDoor(app as never, { methods: methodTableFromRoutes(API_ROUTES), direct: DIRECT_ROUTES }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const { GET: listModels } = await import("@/app/v1/models/route");
      const { GET: getBook } = await import("@/app/v1/market/book/route");
      for (const [path, handler] of [
        ["/v1/models", listModels],
        ["/v1/market/book?model=llama-3.3-70b", getBook],
        ["/v1/market/book?model=no-such-model", getBook],
      ] as const) {
        // The book says when it was read (as_of): the one field two reads of an unchanged market differ in. The
        // suite's other files change the market meanwhile (new models, offers), so two reads that straddle such a
        // change differ too: a few tries, and the last pair must match.
        const withoutReadTime = ({ as_of: _, ...rest }: Record<string, unknown>) => rest;
        let viaFrontDoor = await send(`${url}${path}`, "GET");
        let own = await handler(new Request(`http://localhost${path}`) as never);
        let ownBody = withoutReadTime(await own.json());
        for (let tries = 1; tries < 5 && !isDeepStrictEqual(withoutReadTime(JSON.parse(viaFrontDoor.body)), ownBody); tries++) {
          viaFrontDoor = await send(`${url}${path}`, "GET");
          own = await handler(new Request(`http://localhost${path}`) as never);
          ownBody = withoutReadTime(await own.json());
        }
        expect(viaFrontDoor.status, path).toBe(own.status);
        expect(withoutReadTime(JSON.parse(viaFrontDoor.body)), path).toEqual(ownBody);
        expect(viaFrontDoor.headers["content-type"], path).toBe(own.headers.get("content-type"));
        expect(viaFrontDoor.headers["cache-control"], path).toBe(own.headers.get("cache-control") ?? undefined);
      }
      expect((await send(`${url}/v1/market/stats`, "GET")).status).toBe(200);
      expect((await send(`${url}/v1/market/models`, "GET")).status).toBe(200);
      expect(reachedApp).toEqual([]);

      // HEAD is Next's (it answers it from GET); a POST to a read is the table's 405; the pages stay Next's.
      expect((await send(`${url}/v1/models`, "HEAD")).status).toBe(299);
      expect((await send(`${url}/v1/models`, "POST", { "content-type": "application/json" }, "{}")).status).toBe(405);
      expect((await send(`${url}/market`, "GET")).status).toBe(299);
      expect(reachedApp).toEqual(["HEAD /v1/models", "GET /market"]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
