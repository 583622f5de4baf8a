/**
 * The OpenAPI 3.1 document, assembled from the routes themselves: auth class, body, query and the route's own
 * description come from each handler's `meta` (route()), response shapes are the domain's own schemas, error
 * codes come from APP_ERROR_CODES (lib/errors.ts) and their statuses from ERROR_STATUS (lib/http/errors.ts). Which
 * routes exist is the caller's list (app/api-routes.ts); nothing here imports app/. Served at GET /openapi.json and
 * rendered at /docs.
 */
import "server-only";
import { z } from "zod";
import { deployment, env } from "@/lib/env";
import type { AppErrorCode } from "@/lib/errors";
import { ERROR_STATUS, ErrorBodySchema, errorTypeForStatus } from "@/lib/http/errors";
import type { AuthMode } from "@/lib/http/route-types";
import { ERROR_DESCRIPTIONS, guardErrors } from "@/lib/http/openapi/errors";
import { exampleFromSchema } from "@/lib/http/openapi/examples";
import { REQUEST_HEADERS, RESPONSE_HEADERS, type ResponseHeaderName } from "@/lib/http/openapi/headers";
import { listOperations, type ApiRoute, type HttpMethod, type Operation } from "@/lib/http/openapi/operation";
import { component, componentRegistry } from "@/lib/wire";

type JsonSchema = Record<string, unknown>;
type Json = Record<string, unknown>;

export type OpenApiParameter = {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  description?: string;
  schema: JsonSchema;
};
export type OpenApiResponse = {
  description: string;
  headers?: Record<string, { $ref: string }>;
  content?: { "application/json"?: { schema: JsonSchema; example?: unknown }; "text/event-stream"?: { schema: JsonSchema } };
  /** The error codes this answer can carry, in order. */
  "x-svc-error-codes"?: AppErrorCode[];
};
export type OpenApiOperation = {
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  security: Record<string, string[]>[];
  "x-svc-auth": AuthMode;
  /** The last path parameter takes the rest of the path, slashes included (Next's `[...name]`). */
  "x-svc-catch-all"?: true;
  parameters?: (OpenApiParameter | { $ref: string })[];
  requestBody?: { required: true; content: { "application/json": { schema: JsonSchema; example?: unknown } } };
  responses: Record<string, OpenApiResponse>;
};
export type OpenApiDocument = {
  openapi: "3.1.0";
  info: { title: string; version: string; summary: string; description: string; license: { name: string; identifier: string } };
  jsonSchemaDialect: string;
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, Partial<Record<Lowercase<HttpMethod>, OpenApiOperation>>>;
  components: {
    securitySchemes: Record<string, Json>;
    schemas: Record<string, JsonSchema>;
    headers: Record<string, Json>;
    parameters: Record<string, Json>;
  };
};

export const OpenApiDocumentSchema = component("OpenApiDocument", z.looseObject({ openapi: z.string() }).describe("This document."));

export const SECURITY_SCHEMES = {
  sessionCookie: {
    type: "apiKey",
    in: "cookie",
    name: "svc_session",
    description:
      "The HttpOnly session cookie set by POST /auth/verify after a Sign-In with Ethereum (EIP-4361) on Base. Over https it is named __Host-svc_session (Secure, Path=/, no Domain); both names are accepted.",
  },
  bearerApiKey: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "svc_…",
    description:
      "An API key from POST /v1/account/api-keys. POST /v1/chat/completions takes it, GET /v1/key, where the key describes itself, and GET /v1/generations/{id} (which also takes the session).",
  },
} as const;

/** The auth class of a route as OpenAPI security requirements (public = none). */
export function securityFor(auth: AuthMode): Record<string, string[]>[] {
  if (auth === "key_or_session") return [{ bearerApiKey: [] }, { sessionCookie: [] }];
  return auth === "session" ? [{ sessionCookie: [] }] : auth === "bearer" ? [{ bearerApiKey: [] }] : [];
}

const TAGS = [
  { name: "Auth", description: "Sign-In with Ethereum: nonce, verify, session, logout." },
  { name: "Account", description: "The signed-in account: balance, API keys, ledger, usage, max-price default." },
  { name: "Payments", description: "x402 top-ups in USDC on Base." },
  {
    name: "Inference",
    description: "OpenAI-compatible chat completions, paid from the balance, and the calling key's own limits and usage.",
  },
  { name: "Market", description: "Public market data: models, book, trades, stats." },
  { name: "Supply", description: "Suppliers' offers, earnings and withdrawals; the public pool summary." },
  { name: "Operations", description: "Health checks, this document, and the JSON 404 of unknown /v1 paths." },
];

const ref = (kind: "schemas" | "headers" | "parameters", name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** zod → JSON Schema as OpenAPI 3.1 takes it (draft 2020-12), without the noise of safe-integer bounds. */
function toJsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    override: ({ jsonSchema }) => stripSafeIntegerBounds(jsonSchema as JsonSchema),
  }) as JsonSchema;
  return json;
}

function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(componentRegistry, {
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: "any",
    override: ({ jsonSchema }) => stripSafeIntegerBounds(jsonSchema as JsonSchema),
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      const { $schema: _dialect, $id: _id, ...json } = schema as JsonSchema;
      return [id, json];
    }),
  );
}

function stripSafeIntegerBounds(json: JsonSchema) {
  if (json.minimum === Number.MIN_SAFE_INTEGER) delete json.minimum;
  if (json.maximum === Number.MAX_SAFE_INTEGER) delete json.maximum;
}

/** The schema's registered component, as a $ref; inline when it is not a component. */
function schemaRef(schema: z.ZodType): JsonSchema {
  const id = componentRegistry.get(schema)?.id;
  return id ? ref("schemas", id) : toJsonSchema(schema, "output");
}

function headerRefs(names: Iterable<ResponseHeaderName>): Record<string, { $ref: string }> {
  return Object.fromEntries([...new Set(names)].map((name) => [RESPONSE_HEADERS[name].name, ref("headers", name)]));
}

/** Query parameters from the route's own query schema (one parameter per property). */
function queryParameters(query: z.ZodType): OpenApiParameter[] {
  const json = toJsonSchema(query, "input") as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, schema]) => {
    const { description, ...rest } = schema as JsonSchema & { description?: string };
    return {
      name,
      in: "query",
      required: json.required?.includes(name) ?? false,
      ...(description ? { description: String(description) } : {}),
      schema: rest,
    };
  });
}

function pathParameters(op: Operation): OpenApiParameter[] {
  const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  return names.map((name) => ({ name, in: "path", required: true, description: op.docs.pathParams?.[name], schema: { type: "string" } }));
}

function errorSchema(codes: AppErrorCode[]): JsonSchema {
  return {
    allOf: [
      ref("schemas", "Error"),
      { type: "object", properties: { error: { type: "object", properties: { code: { type: "string", enum: codes } } } } },
    ],
  };
}

/** Headers an answer carries by its status alone: Retry-After on a 429 and a 503, Allow on a 405. */
const EXTRA_HEADERS: Partial<Record<number, ResponseHeaderName[]>> = { 405: ["Allow"], 429: ["RetryAfter"], 503: ["RetryAfter"] };

/** Success answers and error answers merged per status (a 402 can be the x402 challenge or an error). */
function responsesFor(op: Operation, codes: AppErrorCode[]): Record<string, OpenApiResponse> {
  const byStatus = new Map<
    number,
    { descriptions: string[]; schemas: JsonSchema[]; headers: ResponseHeaderName[]; codes: AppErrorCode[]; events?: string }
  >();
  // route() puts the rate-limit headers on every answer once the limits were counted, and Retry-After on the 429.
  const always: ResponseHeaderName[] = op.handler.meta.rateLimit
    ? ["RequestId", "RateLimitLimit", "RateLimitRemaining", "RateLimitReset"]
    : ["RequestId"];
  const slot = (status: number) => {
    let entry = byStatus.get(status);
    if (!entry)
      byStatus.set(status, (entry = { descriptions: [], schemas: [], headers: [...always, ...(EXTRA_HEADERS[status] ?? [])], codes: [] }));
    return entry;
  };
  for (const r of op.docs.responses) {
    const entry = slot(r.status);
    entry.descriptions.push(r.description);
    if (r.schema) entry.schemas.push(schemaRef(r.schema));
    entry.headers.push(...(r.headers ?? []));
    if (r.eventStream) entry.events = r.eventStream;
  }
  for (const code of codes) slot(ERROR_STATUS[code]).codes.push(code);
  for (const [status, entry] of byStatus) {
    if (entry.codes.length === 0) continue;
    entry.descriptions.push(`${errorTypeForStatus(status)}: ${entry.codes.join(", ")}`);
    entry.schemas.push(errorSchema(entry.codes));
    entry.headers.push(...(op.docs.errorHeaders?.[status] ?? []));
  }

  const sorted = [...byStatus.entries()].sort(([a], [b]) => a - b);
  return Object.fromEntries(
    sorted.map(([status, entry]): [string, OpenApiResponse] => {
      const schema = entry.schemas.length === 1 ? entry.schemas[0] : entry.schemas.length > 1 ? { oneOf: entry.schemas } : undefined;
      return [
        String(status),
        {
          description: entry.descriptions.join(" Or ") || String(status),
          headers: headerRefs(entry.headers),
          ...(schema || entry.events
            ? {
                content: {
                  ...(schema && { "application/json": { schema, ...errorExample(entry.codes, entry.schemas.length) } }),
                  ...(entry.events && { "text/event-stream": { schema: { type: "string", description: entry.events } } }),
                },
              }
            : {}),
          ...(entry.codes.length > 0 ? { "x-svc-error-codes": entry.codes } : {}),
        },
      ];
    }),
  );
}

/**
 * An error answer's example, for a status whose answers are errors only: the first code's answer, with its description
 * as the message (a status that is also a success, e.g. the x402 challenge, keeps no example rather than a partial one).
 */
function errorExample(codes: AppErrorCode[], schemas: number): { example?: { error: { message: string; type: string; code: string } } } {
  if (codes.length === 0 || schemas !== 1) return {};
  const code = codes[0];
  return { example: { error: { message: ERROR_DESCRIPTIONS[code], type: errorTypeForStatus(ERROR_STATUS[code]), code } } };
}

/** Every code an operation can answer with: its guards' (auth, input, rate limit) and its own. */
export function errorCodesFor(op: Operation): AppErrorCode[] {
  return [...new Set([...guardErrors(op.handler.meta, op.method), ...(op.docs.errors ?? [])])];
}

function describeOperation(op: Operation): OpenApiOperation {
  const { auth, body, query } = op.handler.meta;
  const { docs } = op;
  const parameters = [
    ...pathParameters(op),
    ...(query ? queryParameters(query) : []),
    ...(docs.requestHeaders ?? []).map((name) => ref("parameters", name)),
    ref("parameters", "RequestIdHeader"),
  ];
  return {
    operationId: docs.operationId,
    tags: [docs.tag],
    summary: docs.summary,
    ...(docs.description ? { description: docs.description } : {}),
    security: securityFor(auth),
    "x-svc-auth": auth,
    ...(op.catchAll ? { "x-svc-catch-all": true as const } : {}),
    parameters,
    ...(body
      ? {
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: toJsonSchema(body, "input"),
                ...(docs.requestExample ? { example: docs.requestExample } : {}),
              },
            },
          },
        }
      : {}),
    responses: responsesFor(op, errorCodesFor(op)),
  };
}

/** Each success answer's example, made from its schema (lib/http/openapi/examples.ts), where the route gave none. */
function addSuccessExamples(paths: OpenApiDocument["paths"], schemas: Record<string, JsonSchema>) {
  const resolve = (ref: string) => schemas[ref.replace("#/components/schemas/", "")];
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      for (const [status, answer] of Object.entries(operation.responses)) {
        const json = answer.content?.["application/json"];
        if (!json || json.example !== undefined || !status.startsWith("2")) continue;
        json.example = exampleFromSchema(json.schema, resolve);
      }
    }
  }
}

export function buildOpenApiDocument(routes: readonly ApiRoute[]): OpenApiDocument {
  const paths: OpenApiDocument["paths"] = {};
  for (const op of listOperations(routes)) {
    const item = (paths[op.path] ??= {});
    item[op.method.toLowerCase() as Lowercase<HttpMethod>] = describeOperation(op);
  }
  const schemas = componentSchemas();
  schemas.Error = {
    ...(schemas.Error ?? toJsonSchema(ErrorBodySchema, "output")),
    "x-svc-error-descriptions": ERROR_DESCRIPTIONS,
  };
  addSuccessExamples(paths, schemas);
  return {
    openapi: "3.1.0",
    info: {
      title: "svc API",
      version: "1",
      summary: "The open inference marketplace: OpenAI-compatible chat completions paid in USDC on Base.",
      description:
        "Public routes need nothing; session routes need the svc_session cookie from Sign-In with Ethereum (GET /auth/nonce, POST /auth/verify); " +
        "POST /v1/chat/completions, POST /v1/responses and GET /v1/key need an svc_ API key as a Bearer token; GET /v1/account/balance, GET /v1/account/usage/refusals and GET /v1/generations/{id} take either. Money is USDC and capacity is diem, both as decimal strings with 6 places; " +
        'prices are integer cents per diem (100 = list price). Every error is {"error":{"message","type","code"}} and every answer carries X-Request-Id. ' +
        `A JSON body is at most ${env.MAX_BODY_BYTES} bytes (413 payload_too_large), nests objects and arrays at most ${env.MAX_JSON_DEPTH} levels deep ` +
        `(400 json_too_deep) and holds at most ${env.MAX_JSON_VALUES} values (400 json_too_many_values). ` +
        "Every operation also lists what any route can answer: 405 method_not_allowed (with Allow) to a method its path does not serve, " +
        "and 503 with Retry-After while the database is unavailable (service_unavailable) or the instance drains (shutting_down). " +
        "An API path under a wrong base URL (/api/v1/…, /chat/completions without /v1) is a JSON 404 naming the /v1 path.",
      license: { name: "MIT", identifier: "MIT" },
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    servers: [{ url: deployment.origin }],
    tags: TAGS,
    paths,
    components: {
      securitySchemes: SECURITY_SCHEMES,
      schemas,
      headers: Object.fromEntries(
        Object.entries(RESPONSE_HEADERS).map(([key, h]) => [key, { description: h.description, schema: h.schema }]),
      ),
      parameters: Object.fromEntries(
        Object.entries(REQUEST_HEADERS).map(([key, h]) => [
          key,
          { name: h.name, in: "header", required: false, description: h.description, schema: h.schema },
        ]),
      ),
    },
  };
}

let cached: OpenApiDocument | undefined;

/** The document, built once per process (it depends only on code and the configured origin). */
export function getOpenApiDocument(routes: readonly ApiRoute[]): OpenApiDocument {
  cached ??= buildOpenApiDocument(routes);
  return cached;
}
