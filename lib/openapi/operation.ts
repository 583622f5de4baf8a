/**
 * What a route says about itself for the OpenAPI description, beside what route() already enforces (auth class,
 * body, query): its summary, success shapes and the error codes its domain code throws. Declared in the route
 * file's own route() call, so a route and its description are one piece of code.
 */
import type { z } from "zod";
import type { AppErrorCode } from "@/lib/errors";
import type { RouteHandler } from "@/lib/http/route";
import type { RequestHeaderName, ResponseHeaderName } from "@/lib/openapi/headers";

export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export type Tag = "Auth" | "Account" | "Inference" | "Payments" | "Market" | "Supply" | "Operations";

export type ResponseSpec = {
  status: number;
  description: string;
  /** The body's schema; none for an empty body (204). */
  schema?: z.ZodType;
  headers?: ResponseHeaderName[];
};

export type OperationDocs = {
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  /** Path parameters, by name: their description. */
  pathParams?: Record<string, string>;
  requestHeaders?: RequestHeaderName[];
  /** Answers other than errors (the success, and e.g. a 402 challenge or a 503 health report). */
  responses: ResponseSpec[];
  /** Error codes the route's own code can throw; route()'s guards add theirs (lib/openapi/errors.ts). */
  errors?: AppErrorCode[];
  /** Extra headers on the error answers of a status (e.g. the X-Svc-* explanation of a 503). */
  errorHeaders?: Partial<Record<number, ResponseHeaderName[]>>;
};

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
