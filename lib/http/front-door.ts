/**
 * The HTTP server's first look at a request, before Next.js sees it (server/main.ts; the tests' route server
 * too). Three things only it can do, because Next's route handlers get neither the socket nor every method:
 *
 * - It appends the socket peer to X-Forwarded-For, so the right-most entry is always the real peer and
 *   lib/http/client-ip.ts can skip exactly TRUST_PROXY_HOPS trusted entries from there (Next itself only fills
 *   the header in when the client sent none).
 * - It answers a method a route does not serve with 405 `method_not_allowed` and `Allow`, in the API's error
 *   shape, for every route of the route list (app/api-routes.ts, the list the OpenAPI description is made from):
 *   Next answers an empty 405 without `Allow`, and crashes with a 500 (a stack trace in dev) on TRACE, which its
 *   Request objects cannot represent. The method table is built from that list in-process when the server starts
 *   (methodTableFromRoutes), so it is there before the first request.
 * - It sets the security headers of production answers (lib/http/security-headers.ts), pages and assets included.
 *
 * It applies the CORS policy (applyCorsPolicy): the bearer-key and public API to any origin, never with credentials;
 * the session cookie's routes and the pages same-origin only.
 *
 * It also serves the routes it is given as `direct` itself (in production: POST /v1/chat/completions), the same
 * `route()` handler without Next's request machinery in front of it, which cost more CPU than the whole money path.
 *
 * And the operator's part of every request: it serves GET /metrics (lib/ops/metrics.ts), opens the request's
 * context (lib/ops/request-context.ts), writes one JSON access-log line and the request metrics when the answer is
 * finished (labelled by the route table's template, never the raw path), and refuses new requests with 503
 * `shutting_down` while the instance drains (lib/ops/shutdown.ts).
 *
 * What a client can make it hold is bounded (lib/http/connections.ts): one request at a time per connection, a few
 * pipelined ones waiting, deliberate timeouts, a cap per client (its connections, or behind trusted proxies its
 * requests in flight) and one on each proxy's connections (createFrontDoorServer). A connection it closes after an
 * answer closes lingering, so a client still sending its body reads that answer rather than a reset. A request
 * target that is not a path (`*`, `*x`, `http://host/x`) is answered 400 here: Next answers `*` with a 500
 * (`TypeError: Invalid URL`) and an absolute-form target with a 308 to whatever host it names.
 */
import "server-only";
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http";
import { randomHexId } from "@/lib/auth/tokens";
import { AppError } from "@/lib/errors";
import { errorBody, errorStatus } from "@/lib/http/errors";
import {
  admitPerForwardedClient,
  capConnectionsPerPeer,
  closeConnectionsLingering,
  connectionLimits,
  serveInTurn,
  serverTimeouts,
  type ConnectionLimits,
} from "@/lib/http/connections";
import { lazyNodeBody, toWebRequest, writeWebResponse } from "@/lib/http/node-adapter";
import type { RouteHandler } from "@/lib/http/route-types";
import { misplacedApiPath } from "@/lib/http/unknown-route";
import { log } from "@/lib/log";
import { HTTP_METHODS, type ApiRoute } from "@/lib/http/openapi/operation";
import { methodLabel, observeRequest, routeLabel, serveMetrics } from "@/lib/ops/metrics";
import { newRequestContext, runInRequestContext, type RequestContext } from "@/lib/ops/request-context";
import { isShuttingDown, trackRequest } from "@/lib/ops/shutdown";

/** What Next.js route handlers can serve at all (next/dist/server/web/http.js). */
const NEXT_METHODS = new Set(["GET", "HEAD", "OPTIONS", "POST", "PUT", "DELETE", "PATCH"]);
const METRICS_PATH = "/metrics";

type Route = {
  path: string;
  segments: string[];
  catchAll: boolean;
  methods: Set<string>;
  /** The methods a page of another origin may call (CORS): those not authenticated by the session cookie. */
  crossOrigin: Set<string>;
  staticSegments: number;
};

/** Which methods each listed path serves, and its template, matched the way Next matches route files. */
export type MethodTable = {
  allowed(pathname: string): string[] | null;
  template(pathname: string): string | null;
  /** The methods of the path that other origins may call (the CORS policy), null for a path the list lacks. */
  crossOrigin(pathname: string): string[] | null;
};

/** What a route table is made of: a path, its methods, and which of them take no session cookie. */
type TableEntry = { path: string; methods: readonly string[]; catchAll: boolean; crossOrigin: readonly string[] };

/**
 * Builds the table from the route list (app/api-routes.ts): a route's methods are the HTTP method names its module
 * exports, as Next serves them. The same paths, methods and catch-alls as the OpenAPI description built from that list
 * (methodTableFromOpenApi of it gives the same table; tests/integration/front-door.test.ts compares the two).
 */
export function methodTableFromRoutes(routes: readonly ApiRoute[]): MethodTable {
  return methodTable(
    routes
      .map((r) => {
        const methods = HTTP_METHODS.filter((m) => typeof r.module[m] === "function");
        const auth = (m: string) => (r.module[m] as Partial<RouteHandler>).meta?.auth;
        const crossOrigin = isSignInPath(r.path) ? [] : methods.filter((m) => auth(m) !== "session");
        return { path: r.path, catchAll: r.catchAll === true, methods, crossOrigin };
      })
      .filter((r) => r.methods.length > 0),
  );
}

/** Builds the table from an OpenAPI document's `paths`. */
export function methodTableFromOpenApi(document: { paths: Record<string, Record<string, unknown>> }): MethodTable {
  return methodTable(
    Object.entries(document.paths).map(([path, item]) => ({
      path,
      methods: Object.keys(item).map((m) => m.toUpperCase()),
      catchAll: Object.values(item).some((op) => (op as Record<string, unknown>)["x-svc-catch-all"] === true),
      // An operation whose only security requirement is the session cookie is same-origin only.
      crossOrigin: isSignInPath(path)
        ? []
        : Object.entries(item)
            .filter(([, op]) => !isSessionOnly((op as { security?: Record<string, unknown>[] }).security))
            .map(([m]) => m.toUpperCase()),
    })),
  );
}

/** /auth/*: the sign-in routes that make and end the session cookie, same-origin like the cookie's own routes. */
function isSignInPath(path: string): boolean {
  return path === "/auth" || path.startsWith("/auth/");
}

function isSessionOnly(security: Record<string, unknown>[] | undefined): boolean {
  return (
    security !== undefined && security.length > 0 && security.every((requirement) => Object.keys(requirement).join() === "sessionCookie")
  );
}

/** HEAD wherever GET is, OPTIONS everywhere, as Next adds them. */
function methodTable(paths: TableEntry[]): MethodTable {
  const routes: Route[] = paths.map(({ path, methods: declared, catchAll, crossOrigin: cross }) => {
    const methods = new Set(declared.filter((m) => NEXT_METHODS.has(m)));
    if (methods.has("GET")) methods.add("HEAD");
    methods.add("OPTIONS");
    const crossOrigin = new Set(cross.filter((m) => NEXT_METHODS.has(m) && m !== "OPTIONS"));
    if (crossOrigin.has("GET")) crossOrigin.add("HEAD");
    const segments = path.split("/").filter(Boolean);
    return { path, segments, catchAll, methods, crossOrigin, staticSegments: segments.filter((s) => !/^\{.+\}$/.test(s)).length };
  });
  // Next's precedence: more static segments first, a catch-all after every exact-length match.
  routes.sort((a, b) => Number(a.catchAll) - Number(b.catchAll) || b.staticSegments - a.staticSegments);
  const find = (pathname: string) => {
    const parts = pathname.split("/").filter(Boolean);
    return routes.find((r) => matches(r, parts));
  };
  return {
    allowed: (pathname) => {
      const route = find(pathname);
      return route ? [...route.methods].sort() : null;
    },
    template: (pathname) => find(pathname)?.path ?? null,
    crossOrigin: (pathname) => {
      const route = find(pathname);
      return route ? [...route.crossOrigin].sort() : null;
    },
  };
}

function matches(route: Route, parts: string[]): boolean {
  const { segments, catchAll } = route;
  if (catchAll ? parts.length < segments.length : parts.length !== segments.length) return false;
  return segments.every((segment, i) => /^\{.+\}$/.test(segment) || segment === parts[i]);
}

export type FrontDoorOptions = {
  /** Which methods each route serves (methodTableFromRoutes(API_ROUTES) in the server). */
  methods: MethodTable;
  /** Headers set on every answer (empty outside production). */
  headers?: Record<string, string>;
  /**
   * Route handlers the front door serves itself, by "METHOD /path" (exact path, no trailing slash): the same
   * `route()` handler Next would run, without Next's per-request machinery in front of it (measured: 4.2 ms of CPU
   * per completion through Next, 1.8 ms served here; README, "Speed"). Everything else goes to `app`.
   */
  direct?: Record<string, RouteHandler>;
  /** What one connection may hold (lib/http/connections.ts); the configured values unless overridden (tests). */
  limits?: Partial<ConnectionLimits>;
};

/**
 * The HTTP server with the front door in front of `app`: node:http's timeouts set deliberately, a cap on connections
 * per socket peer and lingering close on every connection (lib/http/connections.ts). server/main.ts and the tests'
 * route server use it.
 */
export function createFrontDoorServer(app: RequestListener, options: FrontDoorOptions): Server {
  const limits = connectionLimits(options.limits);
  const server = createServer(serverTimeouts(limits), frontDoor(app, { ...options, limits }));
  // Lingering first: a connection refused by the cap closes lingering too.
  closeConnectionsLingering(server, limits);
  capConnectionsPerPeer(server, limits);
  return server;
}

/** Wraps the app's request listener (Next's request handler) with the front door. */
export function frontDoor(app: RequestListener, options: FrontDoorOptions): RequestListener {
  const table = options.methods;
  const limits = connectionLimits(options.limits);
  const admitClient = admitPerForwardedClient(limits);
  // The direct routes' paths are their own templates (labelled even when the table does not list them).
  const directPaths = new Set(Object.keys(options.direct ?? {}).map((key) => key.slice(key.indexOf(" ") + 1)));
  const templateOf = (pathname: string) => table.template(pathname) ?? (directPaths.has(pathname) ? pathname : null);
  // A direct route the table does not list (tests) is described by its handler's own auth.
  const directCrossOrigin = (pathname: string) => {
    const methods = Object.entries(options.direct ?? {})
      .filter(([key, handler]) => key.slice(key.indexOf(" ") + 1) === pathname && handler.meta.auth !== "session")
      .map(([key]) => key.slice(0, key.indexOf(" ")));
    return methods.length > 0 ? methods : null;
  };

  return (req, res) => serveInTurn(req, res, () => admit(req, res), limits.maxPipelined);

  function admit(req: IncomingMessage, res: ServerResponse) {
    appendSocketPeer(req);
    for (const [name, value] of Object.entries(options.headers ?? {})) res.setHeader(name, value);
    const method = (req.method ?? "GET").toUpperCase();
    const target = req.url ?? "/";
    const context = newRequestContext();
    if (!target.startsWith("/")) {
      observeFinished(res, context, method, () => null);
      return refuseTarget(res, method, context);
    }
    const pathname = routedPath(target);
    if (req.headers.origin !== undefined && applyCorsPolicy(req, res, method, table.crossOrigin(pathname) ?? directCrossOrigin(pathname)))
      return;
    if (pathname === METRICS_PATH && (method === "GET" || method === "HEAD")) {
      return void serveMetrics(req, res).catch((error: unknown) => {
        log.error("metrics failed", { error });
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    }
    if (isShuttingDown()) return refuseShuttingDown(res);
    trackRequest(res, context);
    if (!QUIET_PREFIXES.some((prefix) => pathname.startsWith(prefix))) observeFinished(res, context, method, () => templateOf(pathname));
    const tooMany = admitClient(req, res);
    if (tooMany) {
      context.errorCode = tooMany.code;
      return sendError(res, method, tooMany, tooMany.headers);
    }
    runInRequestContext(context, () => serve(req, res, method, pathname));
  }

  function serve(req: IncomingMessage, res: ServerResponse, method: string, pathname: string) {
    const direct = options.direct?.[`${method} ${pathname}`];
    if (direct && rawPathOf(req) === pathname) return serveDirect(direct, req, res);
    // Paths the route list does not have (pages, assets) keep Next's answers, except to methods it cannot take.
    const listed = table.allowed(pathname);
    // An API path under the wrong base URL (/api/v1/..., /chat/completions): a JSON 404 naming /v1, not Next's HTML page.
    const misplaced = listed === null ? misplacedApiPath(pathname) : null;
    if (misplaced) return sendError(res, method, misplaced);
    const allowed = listed ?? (NEXT_METHODS.has(method) ? null : ["GET", "HEAD", "OPTIONS"]);
    if (allowed && !allowed.includes(method)) return refuseMethod(res, method, pathname, allowed);
    // The app gets the request a microtask later: a pipelined request is taken inside the 'finish' event of the
    // answer before it (lib/http/connections.ts), and the app must see that answer finished first.
    queueMicrotask(() => {
      try {
        app(req, res);
      } catch (error) {
        log.error("app failed", { path: pathname.slice(0, 200), error });
        if (!res.headersSent) res.writeHead(500);
        res.end();
      }
    });
  }
}

/**
 * The CORS policy. The API's bearer-key, public and key-or-session routes may be called from any origin's page (what a
 * browser-based agent does with an API key): `Access-Control-Allow-Origin: *`, every response header exposed, and a
 * preflight answered here for the methods such a route serves, Authorization and any other request header allowed.
 * Never `Access-Control-Allow-Credentials`: a browser shows no other origin the answer to a request that carried
 * the session cookie, and session mutations refuse other origins anyway (lib/auth/sessions.ts, assertSameSiteRequest).
 * The sign-in routes (/auth/*), the routes authenticated by the session cookie alone (the dashboard's: keys, offers,
 * top-ups, withdrawals) and pages get no CORS headers: same-origin only. Returns true when it answered the request (a preflight).
 */
function applyCorsPolicy(req: IncomingMessage, res: ServerResponse, method: string, crossOrigin: string[] | null): boolean {
  if (!crossOrigin || crossOrigin.length === 0) return false;
  const requested = req.headers["access-control-request-method"];
  if (method === "OPTIONS" && typeof requested === "string") {
    if (!crossOrigin.includes(requested.toUpperCase())) return false; // the preflight fails: no CORS headers
    res.writeHead(204, {
      "access-control-allow-origin": "*",
      "access-control-allow-methods": crossOrigin.join(", "),
      // `*` covers every request header but Authorization, which is named.
      "access-control-allow-headers": "Authorization, *",
      "access-control-max-age": "600",
      "cache-control": "no-store",
    });
    res.end();
    return true;
  }
  if (!crossOrigin.includes(method)) return false;
  res.setHeader("access-control-allow-origin", "*");
  res.setHeader("access-control-expose-headers", "*");
  return false;
}

/** Framework assets are neither logged nor counted (they would drown the API's lines). */
const QUIET_PREFIXES = ["/_next/", "/favicon"];

/**
 * One access-log line and the request metrics, once the answer is finished or its connection closed (never secrets:
 * no headers, no query; never the raw path: the route table's template, or one of two fixed labels).
 */
function observeFinished(res: ServerResponse, context: RequestContext, method: string, template: () => string | null) {
  const started = performance.now();
  let logged = false;
  const socket = res.req.socket;
  const done = () => {
    if (logged) return;
    logged = true;
    socket.off("close", done);
    const seconds = (performance.now() - started) / 1000;
    const status = res.writableFinished ? res.statusCode : 499;
    const route = routeLabel({ template: template(), method, status });
    observeRequest({ route, method, status, seconds, code: status >= 400 ? context.errorCode : undefined });
    log.info("request", {
      request_id: context.requestId ?? res.getHeader("x-request-id"),
      method: methodLabel(method),
      route,
      status,
      ms: Math.round(seconds * 1000),
      ...(context.accountId && { account_id: context.accountId }),
      ...(context.offerId && { offer_id: context.offerId }),
      ...(status === 499 && { aborted: true }),
    });
  };
  res.once("finish", done);
  res.once("close", done);
  socket.once("close", done);
}

/**
 * Runs a route handler on Node's request and response. The body is read only when the handler asks for it, so
 * route()'s checks come first: a missing, malformed or dead key is answered 401 and a Content-Length over the limit
 * 413 before a byte of the body is read, and a chunked body stops being read at the limit. A body left unread
 * within the limit is discarded after the answer (the connection stays usable); one beyond it closes the connection,
 * lingering (lib/http/connections.ts), so the client reads the answer while it is still sending.
 */
function serveDirect(handler: RouteHandler, req: IncomingMessage, res: ServerResponse) {
  const body = lazyNodeBody(req, handler.meta.maxBodyBytes);
  handler(toWebRequest(req, body.read))
    .then((answer) => {
      const disposition = body.disposition();
      if (disposition === "close") res.setHeader("connection", "close");
      else body.discardRest(res);
      return writeWebResponse(res, answer);
    })
    .catch((error: unknown) => {
      log.warn("direct route failed", { path: pathnameOf(req), error });
      if (!res.headersSent) res.writeHead(500, { connection: "close" });
      res.end();
    });
}

function appendSocketPeer(req: IncomingMessage) {
  const peer = req.socket.remoteAddress;
  if (!peer) return;
  const prior = req.headers["x-forwarded-for"];
  const chain = (Array.isArray(prior) ? prior.join(", ") : prior)?.trim();
  req.headers["x-forwarded-for"] = chain ? `${chain}, ${peer}` : peer;
}

function rawPathOf(req: IncomingMessage): string {
  return (req.url ?? "/").split("?")[0];
}

function pathnameOf(req: IncomingMessage): string {
  return routedPath(req.url ?? "/");
}

/**
 * The path Next routes an origin-form target to: backslashes and repeated slashes collapsed (Next answers those with
 * a 308 to this path), dot segments resolved as URL parsing does (`/v1/chat/./completions` and `%2e` reach the
 * completion route in Next), no trailing slash (a 308 in Next too). Percent-escapes stay as they are, as in Next.
 */
export function routedPath(target: string): string {
  const raw = target
    .split("?")[0]
    .split("#")[0]
    .replace(/\\/g, "/")
    .replace(/\/{2,}/g, "/");
  let path = raw;
  try {
    path = new URL(raw, "http://front-door.invalid").pathname;
  } catch {
    // Not a path URL parsing accepts: matched as it came.
  }
  return path.length > 1 ? path.replace(/\/+$/, "") || "/" : path;
}

function refuseMethod(res: ServerResponse, method: string, pathname: string, allowed: string[]) {
  const safeMethod = /^[A-Z-]{1,20}$/.test(method) ? method : "This method";
  const error = new AppError(
    "method_not_allowed",
    `${safeMethod} is not served on ${pathname.slice(0, 200)}; allowed: ${allowed.join(", ")}.`,
  );
  sendError(res, method, error, { allow: allowed.join(", ") });
}

/** `*`, `*x`, `http://host/x`, `host:443`: no route is named by anything but a path. */
function refuseTarget(res: ServerResponse, method: string, context: RequestContext) {
  const error = new AppError(
    "invalid_request",
    "The request target must be a path starting with / (origin-form); `*` and absolute URLs are not served.",
  );
  context.errorCode = error.code;
  sendError(res, method, error);
}

function sendError(res: ServerResponse, method: string, error: AppError, headers: Record<string, string> = {}) {
  const body = JSON.stringify(errorBody(error));
  res.writeHead(errorStatus(error), {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    ...headers,
    "x-request-id": `req_${randomHexId(12)}`,
    "cache-control": "no-store",
  });
  res.end(method === "HEAD" ? undefined : body);
}

/**
 * The answer to a request that arrives (on a kept-alive connection) or is still unanswered while the instance drains
 * (lib/ops/shutdown.ts: drainServer is given this as its `refuse`).
 */
export function refuseShuttingDown(res: ServerResponse, requestId?: string): void {
  if (res.headersSent) return;
  const error = new AppError(
    "shutting_down",
    "This instance is shutting down; nothing was charged. Retry: another instance will serve it.",
  );
  const body = JSON.stringify(errorBody(error));
  res.writeHead(errorStatus(error), {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    connection: "close",
    "retry-after": "1",
    "cache-control": "no-store",
    ...(requestId && { "x-request-id": requestId }),
  });
  res.end(body);
}
