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
        throw new AppError("not_found", `No route ${req.method} ${new URL(req.url).pathname}. See /${version}/models for what exists.`);
      },
    );
  return { GET: notFound("GET"), POST: notFound("POST"), PUT: notFound("PUT"), PATCH: notFound("PATCH"), DELETE: notFound("DELETE") };
}
