/**
 * The spec's access table, enforced over every route handler that exists when the suite runs: the route
 * files are discovered on disk, so a route added later is covered (or fails the build of this table) without
 * anyone editing a list here.
 */
import { randomUUID } from "node:crypto";
import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { POST as createKey } from "@/app/v1/account/api-keys/route";
import { DELETE as deleteKey } from "@/app/v1/account/api-keys/[id]/route";
import { jsonRequest, readError, routeParams } from "../helpers/http";
import { seedSignedInAccount } from "../helpers/factories";

type Access = "public" | "session" | "bearer" | "key_or_session" | "not-found";
type Handler = (req: Request, ctx: { params: Promise<Record<string, string | string[]>> }) => Promise<Response>;

const APP_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../app");
const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

// /healthz/ledger: an operator health probe (ok + a violation count, no identities or amounts).
const PUBLIC_PATHS = new Set([
  "/healthz",
  "/healthz/ledger",
  "/openapi.json",
  "/v1/models",
  "/v1/supply/pool/summary",
  "/auth/nonce",
  "/auth/verify",
]);

const isUnder = (pattern: string, prefix: string) => pattern === prefix || pattern.startsWith(`${prefix}/`);

/**
 * The class the spec gives a method on a route pattern (as the file system spells it), or undefined when the
 * spec has no row for it. `/auth/verify` is public although it lives under `/auth/*`: the spec's endpoint table
 * lists it as "public (establishes a session)", and it cannot demand the session it creates.
 */
function expectedAccess(method: string, pattern: string): Access | undefined {
  // Issue 36: /v2 is the same API as /v1 with streaming; each route mounted there keeps its class.
  if (pattern.startsWith("/v2/")) return expectedAccess(method, `/v1/${pattern.slice("/v2/".length)}`);
  if (pattern === "/v1/[...path]") return "not-found";
  if (pattern === "/v1/chat/completions") return method === "POST" ? "bearer" : undefined;
  // Issue 24: the Responses API is chat completions under another shape, with the same credential.
  if (pattern === "/v1/responses") return method === "POST" ? "bearer" : undefined;
  // Not in the spec's table (issue 22): a read of the account's own records, for its agents' keys and its dashboard.
  if (pattern === "/v1/generations/[id]") return method === "GET" ? "key_or_session" : undefined;
  // Issue 39: an agent reads its account's balance with its key (before calling or topping up); the dashboard with its session.
  if (pattern === "/v1/account/balance") return method === "GET" ? "key_or_session" : undefined;
  // Issue 38: an agent reads why its key was refused (its own refusals only); the dashboard every key's.
  if (pattern === "/v1/account/usage/refusals") return method === "GET" ? "key_or_session" : undefined;
  // Issue 22: a key describes itself through its own credential (OpenRouter's GET /api/v1/key).
  if (pattern === "/v1/key") return method === "GET" ? "bearer" : undefined;
  if (PUBLIC_PATHS.has(pattern) || isUnder(pattern, "/v1/market")) return "public";
  if (
    isUnder(pattern, "/v1/account") ||
    isUnder(pattern, "/v1/x402/top-up") ||
    isUnder(pattern, "/v1/supply") ||
    isUnder(pattern, "/auth")
  ) {
    return "session";
  }
  return undefined;
}

/** "app/v1/(group)/account/[id]/route.ts" -> "/v1/account/[id]"; private folders (`_x`) are not routed. */
function toPattern(relativeFile: string): string | null {
  const segments = path
    .dirname(relativeFile)
    .split(path.sep)
    .filter((s) => s !== ".");
  if (segments.some((s) => s.startsWith("_"))) return null;
  return `/${segments.filter((s) => !/^\(.+\)$/.test(s) && !s.startsWith("@")).join("/")}`;
}

/** A concrete URL and Next-style params for a pattern: a random UUID in each dynamic segment. */
function materialize(pattern: string) {
  const params: Record<string, string | string[]> = {};
  const url = pattern
    .split("/")
    .map((segment) => {
      const catchAll = /^\[\[?\.\.\.(\w+)\]\]?$/.exec(segment);
      if (catchAll) {
        const parts = ["matrix-probe", randomUUID()];
        params[catchAll[1]] = parts;
        return parts.join("/");
      }
      const dynamic = /^\[(\w+)\]$/.exec(segment);
      if (dynamic) return (params[dynamic[1]] = randomUUID());
      return segment;
    })
    .join("/");
  return { url, params };
}

type RouteMethod = { file: string; pattern: string; method: string; handler: Handler; access: Access | undefined };

async function discoverRouteMethods(): Promise<RouteMethod[]> {
  const files = readdirSync(APP_DIR, { recursive: true, encoding: "utf8" }).filter((f) => /(^|[\\/])route\.(ts|tsx|js|mjs)$/.test(f));
  const found: RouteMethod[] = [];
  for (const relative of files.sort()) {
    const pattern = toPattern(relative);
    if (pattern === null) continue;
    const mod = (await import(path.join(APP_DIR, relative))) as Record<string, unknown>;
    for (const method of HTTP_METHODS) {
      const handler = mod[method];
      if (typeof handler === "function") {
        found.push({ file: `app/${relative}`, pattern, method, handler: handler as Handler, access: expectedAccess(method, pattern) });
      }
    }
  }
  return found;
}

const ROUTES = await discoverRouteMethods();

type CredentialSet = "none" | "session cookie" | "valid Bearer key" | "revoked Bearer key" | "cookie and Bearer key";
const CREDENTIAL_SETS: CredentialSet[] = ["none", "session cookie", "valid Bearer key", "revoked Bearer key", "cookie and Bearer key"];

let validKey: string;
let revokedKey: string;

beforeAll(async () => {
  const owner = await seedSignedInAccount();
  const create = async () => {
    const res = await createKey(jsonRequest("POST", "/v1/account/api-keys", { name: "matrix" }, { cookie: owner.cookie }));
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; key: string };
  };
  validKey = (await create()).key;
  const revoked = await create();
  const res = await deleteKey(
    jsonRequest("DELETE", `/v1/account/api-keys/${revoked.id}`, undefined, { cookie: owner.cookie }),
    routeParams({ id: revoked.id }),
  );
  expect(res.status).toBe(200);
  revokedKey = revoked.key;
});

/** Each request gets a session of its own, so a route that ends sessions (logout) cannot spoil the next row. */
async function headersFor(credentials: CredentialSet): Promise<Record<string, string>> {
  switch (credentials) {
    case "none":
      return {};
    case "session cookie":
      return { cookie: (await seedSignedInAccount()).cookie };
    case "valid Bearer key":
      return { authorization: `Bearer ${validKey}` };
    case "revoked Bearer key":
      return { authorization: `Bearer ${revokedKey}` };
    case "cookie and Bearer key":
      return { cookie: (await seedSignedInAccount()).cookie, authorization: `Bearer ${validKey}` };
  }
}

/** What the table demands: an exact 401 code, or only that auth let the request through. */
function expectation(access: Access, credentials: CredentialSet): { status: number; code: string } | "passes auth" | "not found" {
  if (access === "public") return "passes auth";
  if (access === "not-found") return "not found";
  if (access === "session") {
    return credentials === "session cookie" ? "passes auth" : { status: 401, code: "session_required" };
  }
  if (access === "key_or_session") {
    // The Bearer key wins when sent (a revoked one is refused, never read past to the cookie).
    if (credentials === "none") return { status: 401, code: "missing_credentials" };
    if (credentials === "revoked Bearer key") return { status: 401, code: "invalid_api_key" };
    return "passes auth";
  }
  switch (credentials) {
    case "none":
      return { status: 401, code: "missing_credentials" };
    case "session cookie":
    case "cookie and Bearer key":
      return { status: 401, code: "session_cookie_not_accepted" };
    case "revoked Bearer key":
      return { status: 401, code: "invalid_api_key" };
    case "valid Bearer key":
      return "passes auth";
  }
}

describe("route discovery", () => {
  it("finds the route files on disk", () => {
    const seen = new Set(ROUTES.map((r) => `${r.method} ${r.pattern}`));
    for (const known of [
      "GET /healthz",
      "GET /auth/nonce",
      "POST /auth/verify",
      "POST /auth/logout",
      "POST /v1/account/api-keys",
      "DELETE /v1/account/api-keys/[id]",
      "GET /v1/[...path]",
    ]) {
      expect(seen).toContain(known);
    }
  });

  it("classifies every exported handler by the spec's access table (a route outside it fails here)", () => {
    const unclassified = ROUTES.filter((r) => r.access === undefined).map((r) => `${r.method} ${r.pattern} (${r.file})`);
    expect(unclassified).toEqual([]);
  });
});

const ROWS = ROUTES.filter((r) => r.access !== undefined).flatMap((route) =>
  CREDENTIAL_SETS.map((credentials) => ({ ...route, access: route.access as Access, credentials })),
);

describe("access matrix", () => {
  it.each(ROWS)("$method $pattern ($access) with $credentials", async ({ method, pattern, handler, access, credentials }) => {
    const { url, params } = materialize(pattern);
    const req = jsonRequest(method, url, undefined, await headersFor(credentials));
    const res = await handler(req, routeParams(params));
    const expected = expectation(access, credentials);

    if (expected === "passes auth") {
      expect([401, 403], `${method} ${url} answered ${res.status}`).not.toContain(res.status);
    } else if (expected === "not found") {
      expect(res.status).toBe(404);
      expect((await readError(res)).code).toBe("not_found");
    } else {
      expect(res.status).toBe(expected.status);
      expect((await readError(res)).code).toBe(expected.code);
    }
  });
});
