import "server-only";
import { AppError } from "@/lib/errors";
import { route, type ApiVersion } from "@/lib/http/route";
import type { HttpMethod } from "@/lib/http/openapi/operation";
import type { RouteHandler } from "@/lib/http/route-types";

/**
 * Any path under a version's prefix that no route serves: a JSON 404 in the API's error shape, instead of the HTML
 * not-found page a client's JSON parser chokes on.
 */
export function unknownRoutes(version: ApiVersion): Record<"GET" | "POST" | "PUT" | "PATCH" | "DELETE", RouteHandler> {
  const notFound = (method: HttpMethod) =>
    route(
      {
        auth: "public",
        docs: {
          operationId: `unknown${version.toUpperCase()}Route${method[0]}${method.slice(1).toLowerCase()}`,
          tag: "Operations",
          summary: `Any other /${version} path`,
          description: `Answers a JSON 404 in the API's error shape (instead of an HTML page) for every /${version} path no route above serves.`,
          pathParams: { path: "The rest of the path (may contain slashes)." },
          responses: [],
          errors: ["not_found"],
        },
      },
      ({ req }) => {
        const pathname = new URL(req.url).pathname;
        const doubled = /^\/v[12]\/(?:api\/)?v[12](\/.*)$/.exec(pathname);
        const hint = doubled
          ? ` The version is in the path twice: set your client's base URL to end in /${version} once (this request's path is /${version}${doubled[1]}).`
          : ` See GET /${version}/models for the models and /openapi.json for every route.`;
        throw new AppError("not_found", `No route ${req.method} ${pathname}.${hint}`);
      },
    );
  return { GET: notFound("GET"), POST: notFound("POST"), PUT: notFound("PUT"), PATCH: notFound("PATCH"), DELETE: notFound("DELETE") };
}

/** The first segments of /v1 routes a client reaches without /v1 when its base URL lacks it (no page has these). */
const V1_ONLY_SEGMENTS = new Set([
  "chat",
  "completions",
  "responses",
  "models",
  "embeddings",
  "key",
  "generations",
  "generation",
  "credits",
  "x402",
]);

/**
 * The 404 for a path that is an API path with the wrong base URL: OpenRouter's `/api/v1/...` (its base URL has /api,
 * svc's does not), `/openai/v1/...`, or a /v1 route without its /v1 (`/chat/completions`). The front door
 * (lib/http/front-door.ts) answers it for any path no route serves, in the API's error shape, instead of the HTML page
 * a client's JSON parser chokes on. null for any other path (pages keep their own 404).
 */
export function misplacedApiPath(pathname: string): AppError | null {
  const prefixed = /^\/(?:api|openai)(?:\/v1)?(\/.*)?$/.exec(pathname);
  const segment = pathname.split("/")[1] ?? "";
  const rest = prefixed ? (prefixed[1] ?? "") : V1_ONLY_SEGMENTS.has(segment) ? pathname : null;
  if (rest === null) return null;
  const why = prefixed
    ? `svc's API is at /v1, not ${pathname.startsWith("/api") ? "/api/v1 (OpenRouter's base URL has /api; svc's does not)" : "/openai/v1"}`
    : "svc's API is under /v1";
  return new AppError(
    "not_found",
    `No route ${pathname}: ${why}. Set your client's base URL to this server's origin followed by /v1${rest ? `; this request is /v1${rest}` : ""}.`,
    { details: { did_you_mean: `/v1${rest}` } },
  );
}
