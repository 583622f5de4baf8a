import "server-only";
import type { z } from "zod";
import { assertSameSiteRequest, readAuthorization, readSessionCookie } from "@/lib/auth/request-credentials";
import { isKeyRefusal, noteRefusal } from "@/lib/account/refusals";
import { getApiKeyForCompletion, getApiKeyOrThrow, type ApiKeyContext } from "@/lib/auth/api-key-auth";
import { randomHexId } from "@/lib/auth/tokens";
import { getSessionOrThrow, type SessionContext } from "@/lib/auth/sessions";
import { isDatabaseUnavailable } from "@/lib/db/errors";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { errorBody, errorStatus } from "@/lib/http/errors";
import { parseInput, readJsonBody, readQuery } from "@/lib/http/body";
import { clientIp } from "@/lib/http/client-ip";
import { countFailedAuthentication, enforceRateLimits, postAuthRules, preAuthRules, tighter } from "@/lib/http/rate-limit";
import { json } from "@/lib/http/responses";
import type { AuthMode, NextRouteContext, OperationDocs, RouteHandler, RouteMeta } from "@/lib/http/route-types";
import { log } from "@/lib/log";
import { currentRequestContext, newRequestContext, runInRequestContext } from "@/lib/ops/request-context";

type Schema = z.ZodType | undefined;
type Infer<S extends Schema> = S extends z.ZodType ? z.infer<S> : undefined;

type BaseContext<B extends Schema, Q extends Schema> = {
  req: Request;
  body: Infer<B>;
  query: Infer<Q>;
  params: Record<string, string>;
  requestId: string;
  ip: string;
};

/** Who called a `key_or_session` route: an account, through one of its live keys or its session. */
export type CallerContext = { accountId: string; apiKeyId: string | null };

export type RouteContext<A extends AuthMode, B extends Schema, Q extends Schema> = BaseContext<B, Q> &
  (A extends "session"
    ? { session: SessionContext }
    : A extends "bearer"
      ? { apiKey: ApiKeyContext }
      : A extends "key_or_session"
        ? { caller: CallerContext }
        : unknown);

type RouteOptions<A extends AuthMode, B extends Schema, Q extends Schema> = {
  auth: A;
  body?: B;
  query?: Q;
  /** Overrides the configured JSON body limit for this route. */
  maxBodyBytes?: number;
  /**
   * Rate limits (lib/http/rate-limit.ts; 429 with Retry-After, X-RateLimit-* on every answer). Every session and
   * bearer route is limited; a public one only when it says so. "write" counts a read as a write (it stores
   * something); writes are counted as such by their method anyway.
   */
  rateLimit?: boolean | "write";
  /** The route's description for GET /openapi.json and /docs (summary, success shapes, its own error codes). */
  docs: OperationDocs;
};

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The one way to write a route handler: authenticates by mode, parses body and query with zod,
 * and renders every thrown error as `{"error":{"message","type","code"}}` with an `X-Request-Id`.
 */
export function route<A extends AuthMode, B extends Schema = undefined, Q extends Schema = undefined>(
  options: RouteOptions<A, B, Q>,
  handler: (ctx: RouteContext<A, B, Q>) => Promise<Response> | Response,
): RouteHandler {
  const limited = options.rateLimit !== undefined ? options.rateLimit !== false : options.auth !== "public";
  const maxBodyBytes = options.maxBodyBytes ?? env.MAX_BODY_BYTES;
  const handle = async (req: Request, next?: NextRouteContext): Promise<Response> => {
    // The front door opened this request's context; a handler called directly (tests) gets its own.
    const context = currentRequestContext();
    if (!context) return runInRequestContext(newRequestContext(), () => handle(req, next));
    const incomingId = req.headers.get("x-request-id");
    const requestId = incomingId && REQUEST_ID.test(incomingId) ? incomingId : `req_${randomHexId(12)}`;
    context.requestId = requestId;
    let response: Response;
    let rateHeaders: Record<string, string> = {};
    const ip = clientIp(req, env.TRUST_PROXY_HOPS);
    // The key a bearer route authenticated: its refusals (402, 429, 503) are counted for it (lib/account/refusals.ts).
    let bearer: ApiKeyContext | undefined;
    try {
      const write = options.rateLimit === "write" || !SAFE_METHODS.has(req.method);
      if (limited) rateHeaders = await enforceRateLimits(preAuthRules(ip, { write, bearer: options.auth === "bearer" }));
      const auth = await authenticate(options.auth, req).catch(async (error: unknown) => {
        throw limited && error instanceof AppError && errorStatus(error) === 401 ? await countFailedAuthentication(ip, error) : error;
      });
      if ("apiKey" in auth) bearer = auth.apiKey;
      if (limited) {
        const who = {
          apiKeyId: "apiKey" in auth ? auth.apiKey?.apiKeyId : "caller" in auth ? (auth.caller?.apiKeyId ?? undefined) : undefined,
          accountId: "session" in auth ? auth.session?.accountId : "caller" in auth ? auth.caller?.accountId : undefined,
          write,
        };
        rateHeaders = tighter(rateHeaders, await enforceRateLimits(postAuthRules(who)));
      }
      const body = options.body ? parseInput(options.body, await readJsonBody(req, maxBodyBytes), "body") : undefined;
      const query = options.query ? parseInput(options.query, readQuery(req), "query") : undefined;
      const params = flattenParams((await next?.params) ?? {});
      context.accountId =
        "session" in auth
          ? auth.session?.accountId
          : "apiKey" in auth
            ? auth.apiKey?.accountId
            : "caller" in auth
              ? auth.caller?.accountId
              : undefined;
      const ctx = { req, body, query, params, requestId, ip, ...auth } as RouteContext<A, B, Q>;
      response = await handler(ctx);
    } catch (error) {
      response = errorResponse(error, requestId, req);
      context.errorCode = error instanceof AppError ? error.code : isDatabaseUnavailable(error) ? "service_unavailable" : "internal_error";
      if (bearer && error instanceof AppError && isKeyRefusal(response.status, error.code)) {
        noteRefusal({
          apiKeyId: bearer.apiKeyId,
          accountId: bearer.accountId,
          status: response.status,
          code: error.code,
          message: error.message,
        });
      }
    }
    for (const [name, value] of Object.entries(rateHeaders)) if (!response.headers.has(name)) response.headers.set(name, value);
    response.headers.set("x-request-id", requestId);
    return response;
  };
  const meta: RouteMeta = {
    auth: options.auth,
    body: options.body,
    query: options.query,
    maxBodyBytes,
    rateLimit: limited,
    docs: options.docs,
  };
  return Object.assign(handle, { meta });
}

/** The API's versions: /v1 is the service spec's contract exactly; /v2 is the same API, with streaming. */
export type ApiVersion = "v1" | "v2";

/**
 * A route mounted under another version's prefix: the same handler, one implementation and never a copy, described
 * as an operation of its own (the operationId gains the version, e.g. listModelsV2: a document names each once).
 */
export function mountedIn(version: ApiVersion, handler: RouteHandler): RouteHandler {
  const mounted = (req: Request, next?: NextRouteContext) => handler(req, next);
  const docs = { ...handler.meta.docs, operationId: `${handler.meta.docs.operationId}${version.toUpperCase()}` };
  return Object.assign(mounted, { meta: { ...handler.meta, docs } });
}

async function authenticate(mode: AuthMode, req: Request) {
  if (mode === "public") return {};
  const authorization = readAuthorization(req);
  const cookie = readSessionCookie(req);
  if (mode === "bearer") {
    if (cookie) {
      throw new AppError(
        "session_cookie_not_accepted",
        "The inference endpoint takes an API key, not a browser session: send Authorization: Bearer svc_... without the svc_session cookie.",
      );
    }
    // Bearer routes reserve through a statement that re-authenticates the key (see getApiKeyForCompletion).
    return { apiKey: await getApiKeyForCompletion(authorization.bearer) };
  }
  if (mode === "key_or_session") {
    // An Authorization header, when sent, is the credential, checked against the key's row (a revoked key learns
    // nothing, whatever a cache holds); without one, the session, under the same-site rule of session routes.
    if (authorization.present) {
      const key = await getApiKeyOrThrow(authorization.bearer);
      return { caller: { accountId: key.accountId, apiKeyId: key.apiKeyId } satisfies CallerContext };
    }
    if (!cookie) {
      throw new AppError("missing_credentials", "Send an API key as `Authorization: Bearer svc_...`, or sign in (the svc_session cookie).");
    }
    if (!SAFE_METHODS.has(req.method)) assertSameSiteRequest(req);
    const session = await getSessionOrThrow(cookie);
    return { caller: { accountId: session.accountId, apiKeyId: null } satisfies CallerContext };
  }
  if (authorization.present) {
    throw new AppError(
      "session_required",
      "This route needs a signed-in wallet session (the svc_session cookie); API keys are accepted only by POST /v1/chat/completions, POST /v1/responses, GET /v1/key, GET /v1/account/balance, GET /v1/account/usage/refusals and GET /v1/generations/{id}.",
    );
  }
  // Session mutations must come from our own origin (the cookie is SameSite=Lax; this closes the rest).
  if (!SAFE_METHODS.has(req.method)) assertSameSiteRequest(req);
  return { session: await getSessionOrThrow(cookie) };
}

function flattenParams(params: Record<string, string | string[]>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, Array.isArray(v) ? v.join("/") : v]));
}

export function errorResponse(error: unknown, requestId: string, req?: Request): Response {
  if (error instanceof AppError) {
    return json(errorBody(error), { status: errorStatus(error), headers: error.headers });
  }
  if (isDatabaseUnavailable(error)) {
    log.error("database unavailable", { requestId, method: req?.method, path: req ? new URL(req.url).pathname : undefined, error });
    return errorResponse(databaseUnavailable(error), requestId, req);
  }
  log.error("unhandled error", { requestId, method: req?.method, path: req ? new URL(req.url).pathname : undefined, error });
  const internal = new AppError("internal_error", `Internal error; quote request id ${requestId} when reporting it.`);
  return json(errorBody(internal), { status: errorStatus(internal) });
}

/** Seconds a client is asked to wait before retrying while the database is unreachable (a restart takes a few). */
const DATABASE_RETRY_AFTER_SECONDS = 2;

/** The answer to any request the database could not serve: temporary, so 503 with Retry-After, not a 500. */
function databaseUnavailable(cause: unknown): AppError {
  return new AppError("service_unavailable", "The service's database is unavailable right now; retry in a few seconds.", {
    headers: { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) },
    cause,
  });
}
