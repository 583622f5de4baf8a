/** The manifest of routes and its operations, and the helper routes use to declare their answers. */
import "server-only";
import type { z } from "zod";
import type { OperationDocs, ResponseSpec, RouteHandler } from "@/lib/http/route-types";
import type { ResponseHeaderName } from "@/lib/http/openapi/headers";

export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** A success (or other non-error) answer of a route. */
export function response(status: number, schema: z.ZodType | null, description: string, headers?: ResponseHeaderName[]): ResponseSpec {
  return { status, description, ...(schema ? { schema } : {}), ...(headers ? { headers } : {}) };
}

/** A route file as the manifest (app/api-routes.ts) lists it: its OpenAPI path and the module's exports. */
export type ApiRoute = {
  /** OpenAPI path template: `/v1/account/api-keys/{id}`. */
  path: string;
  module: Record<string, unknown>;
  /** The last path parameter takes the rest of the path, slashes included (Next's `[...name]`). */
  catchAll?: boolean;
};

/** One method of one route, with the handler route() made and the description it carries. */
export type Operation = { method: HttpMethod; path: string; catchAll: boolean; handler: RouteHandler; docs: OperationDocs };

/** Every exported method handler of the listed route modules. */
export function listOperations(routes: readonly ApiRoute[]): Operation[] {
  return routes.flatMap((r) =>
    HTTP_METHODS.filter((method) => typeof r.module[method] === "function").map((method) => {
      const handler = r.module[method] as RouteHandler;
      return { method, path: r.path, catchAll: r.catchAll === true, handler, docs: handler.meta.docs };
    }),
  );
}
