/**
 * What a route is, as route() (lib/http/route.ts) makes it and the API description (lib/openapi) reads it: its auth
 * mode, its inputs and limits, and the description it declares in its own route() call. One file both import, so
 * neither imports the other's types. Types only.
 */
import "server-only";
import type { z } from "zod";
import type { AppErrorCode } from "@/lib/errors";
import type { RequestHeaderName, ResponseHeaderName } from "@/lib/http/openapi/headers";

/**
 * How a route authenticates: none; the session cookie; a Bearer key (the inference endpoint, which refuses a cookie);
 * or either credential of one account (reads an agent and the dashboard both need: the Bearer key when an
 * Authorization header is sent, else the session).
 */
export type AuthMode = "public" | "session" | "bearer" | "key_or_session";

export type Tag = "Auth" | "Account" | "Inference" | "Payments" | "Market" | "Supply" | "Operations";

export type ResponseSpec = {
  status: number;
  description: string;
  /** The body's schema; none for an empty body (204). */
  schema?: z.ZodType;
  headers?: ResponseHeaderName[];
  /** The same status may answer as an event stream (`stream: true`): what its events are. */
  eventStream?: string;
};

/**
 * What a route says about itself for the OpenAPI description, beside what route() already enforces (auth class,
 * body, query): its summary, success shapes and the error codes its domain code throws. Declared in the route
 * file's own route() call, so a route and its description are one piece of code.
 */
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
  /** Error codes the route's own code can throw; route()'s guards add theirs (lib/http/openapi/errors.ts). */
  errors?: AppErrorCode[];
  /** Extra headers on the error answers of a status (e.g. the X-Svc-* explanation of a 503). */
  errorHeaders?: Partial<Record<number, ResponseHeaderName[]>>;
  /** A request body the route accepts, shown as the operation's example (tests/integration/openapi.test.ts parses it with the body's schema). */
  requestExample?: Record<string, unknown>;
};

/** What a route enforces, attached to its handler so descriptions (lib/openapi) read it from the route itself. */
export type RouteMeta = {
  auth: AuthMode;
  body?: z.ZodType;
  query?: z.ZodType;
  /** The JSON body limit this route reads with (the configured one unless the route overrides it). */
  maxBodyBytes: number;
  rateLimit: boolean;
  docs: OperationDocs;
};

export type NextRouteContext = { params: Promise<Record<string, string | string[]>> };

export type RouteHandler = ((req: Request, next?: NextRouteContext) => Promise<Response>) & { readonly meta: RouteMeta };
