/**
 * GET /openapi.json describes exactly the routes that exist, with the auth class, body and query each handler
 * enforces, and is a well-formed OpenAPI 3.1 document. Route files are discovered on disk, so a route added
 * without a description (or a description left behind by a deleted route) fails here.
 */
import { readdirSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GET as getOpenApiJson } from "@/app/openapi.json/route";
import { createApiKey } from "@/lib/auth/api-keys";
import type { AppErrorCode } from "@/lib/errors";
import { ERROR_STATUS, ErrorBodySchema } from "@/lib/http/errors";
import type { RouteHandler } from "@/lib/http/route-types";
import { API_ROUTES } from "@/app/api-routes";
import {
  buildOpenApiDocument,
  securityFor,
  type OpenApiDocument,
  type OpenApiOperation,
  type OpenApiParameter,
} from "@/lib/http/openapi/document";
import { HTTP_METHODS, listOperations } from "@/lib/http/openapi/operation";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, routeParams } from "../helpers/http";

const APP_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../app");

type DiskRoute = { file: string; path: string; catchAll: boolean; method: (typeof HTTP_METHODS)[number]; handler: RouteHandler };

/** "v1/account/api-keys/[id]/route.ts" → "/v1/account/api-keys/{id}"; groups "(x)" vanish, private "_x" folders are not routed. */
function toOpenApiPath(relativeFile: string): { path: string; catchAll: boolean } | null {
  const segments = path
    .dirname(relativeFile)
    .split(path.sep)
    .filter((s) => s !== ".");
  if (segments.some((s) => s.startsWith("_"))) return null;
  let catchAll = false;
  const parts = segments
    .filter((s) => !/^\(.+\)$/.test(s) && !s.startsWith("@"))
    .map((s) => {
      const rest = /^\[\[?\.\.\.(\w+)\]\]?$/.exec(s);
      if (rest) {
        catchAll = true;
        return `{${rest[1]}}`;
      }
      return s.replace(/^\[(\w+)\]$/, "{$1}");
    });
  return { path: `/${parts.join("/")}`, catchAll };
}

async function discoverRoutes(): Promise<DiskRoute[]> {
  const files = readdirSync(APP_DIR, { recursive: true, encoding: "utf8" }).filter((f) => /(^|[\\/])route\.(ts|tsx|js|mjs)$/.test(f));
  const found: DiskRoute[] = [];
  for (const relative of files.sort()) {
    const routePath = toOpenApiPath(relative);
    if (!routePath) continue;
    const mod = (await import(path.join(APP_DIR, relative))) as Record<string, unknown>;
    for (const method of HTTP_METHODS) {
      if (typeof mod[method] === "function")
        found.push({ file: `app/${relative}`, ...routePath, method, handler: mod[method] as RouteHandler });
    }
  }
  return found;
}

const DISK = await discoverRoutes();
const OPERATIONS = listOperations(API_ROUTES);
const DOC = buildOpenApiDocument(API_ROUTES);
const key = (method: string, p: string) => `${method} ${p}`;

function operationOf(doc: OpenApiDocument, spec: { method: string; path: string }): OpenApiOperation | undefined {
  return doc.paths[spec.path]?.[spec.method.toLowerCase() as "get"];
}

describe("the description matches the routes", () => {
  it("finds route files on disk", () => {
    expect(DISK.length).toBeGreaterThan(20);
    expect(DISK.map((r) => key(r.method, r.path))).toEqual(
      expect.arrayContaining(["GET /auth/nonce", "POST /v1/chat/completions", "GET /openapi.json"]),
    );
  });

  it("describes every exported method of every route file", () => {
    const described = new Set(OPERATIONS.map((o) => key(o.method, o.path)));
    const missing = DISK.filter((r) => !described.has(key(r.method, r.path))).map((r) => `${key(r.method, r.path)} (${r.file})`);
    expect(missing).toEqual([]);
    for (const r of DISK) expect(operationOf(DOC, r), key(r.method, r.path)).toBeDefined();
  });

  it("describes nothing that does not exist", () => {
    const onDisk = new Map(DISK.map((r) => [key(r.method, r.path), r]));
    const phantom = OPERATIONS.filter((o) => !onDisk.has(key(o.method, o.path))).map((o) => key(o.method, o.path));
    expect(phantom).toEqual([]);
    const documented = Object.entries(DOC.paths).flatMap(([p, item]) => Object.keys(item).map((m) => key(m.toUpperCase(), p)));
    expect(documented.filter((k) => !onDisk.has(k))).toEqual([]);
  });

  it("reads each route's handler itself: the same function, catch-all where the file is one", () => {
    const onDisk = new Map(DISK.map((r) => [key(r.method, r.path), r]));
    for (const op of OPERATIONS) {
      const disk = onDisk.get(key(op.method, op.path))!;
      expect(op.handler, key(op.method, op.path)).toBe(disk.handler);
      expect(op.catchAll === true, key(op.method, op.path)).toBe(disk.catchAll);
    }
  });

  it.each(DISK)("$method $path: auth class, body and query are the handler's own", (r) => {
    const meta = r.handler.meta;
    expect(meta, `${r.file} must be made with route()`).toBeDefined();
    const op = operationOf(DOC, r)!;
    expect(op["x-svc-auth"]).toBe(meta.auth);
    expect(op.security).toEqual(securityFor(meta.auth));

    if (meta.body) {
      const expected = z.toJSONSchema(meta.body, { io: "input", unrepresentable: "any" }) as { properties?: object; required?: string[] };
      const actual = op.requestBody?.content["application/json"].schema as { properties?: object; required?: string[] };
      expect(actual, "request body").toBeDefined();
      expect(Object.keys(actual.properties ?? {})).toEqual(Object.keys(expected.properties ?? {}));
      expect(actual.required ?? []).toEqual(expected.required ?? []);
    } else {
      expect(op.requestBody).toBeUndefined();
    }

    const query = (op.parameters ?? []).filter((p): p is OpenApiParameter => !("$ref" in p) && p.in === "query");
    if (meta.query) {
      const expected = z.toJSONSchema(meta.query, { io: "input", unrepresentable: "any" }) as { properties?: object; required?: string[] };
      expect(query.map((p) => p.name)).toEqual(Object.keys(expected.properties ?? {}));
      expect(query.filter((p) => p.required).map((p) => p.name)).toEqual(expected.required ?? []);
    } else {
      expect(query).toEqual([]);
    }
  });

  it.each(OPERATIONS)("$method $path: lists the errors its guards produce, each under its status", (spec) => {
    const op = operationOf(DOC, spec)!;
    const codesByStatus = Object.entries(op.responses).flatMap(([status, r]) =>
      (r["x-svc-error-codes"] ?? []).map((code) => [code, Number(status)] as const),
    );
    for (const [code, status] of codesByStatus) expect(ERROR_STATUS[code], code).toBe(status);
    const codes = new Set(codesByStatus.map(([code]) => code));
    const expected: AppErrorCode[] = [
      "internal_error",
      "service_unavailable",
      "shutting_down",
      "method_not_allowed",
      ...(spec.docs.errors ?? []),
    ];
    const { auth, body, query, rateLimit } = spec.handler.meta;
    if (auth === "session") expected.push("session_required");
    if (auth === "session" && spec.method !== "GET") expected.push("cross_site_request");
    if (auth === "bearer") expected.push("missing_credentials", "invalid_api_key", "session_cookie_not_accepted");
    if (auth === "key_or_session") expected.push("missing_credentials", "invalid_api_key", "session_required");
    if (rateLimit) expected.push("rate_limited");
    if (body) expected.push("invalid_json", "unsupported_content_type", "unknown_field", "invalid_request", "payload_too_large");
    if (query) expected.push("invalid_request", "unknown_field");
    for (const code of expected) expect(codes, `${key(spec.method, spec.path)} should list ${code}`).toContain(code);
    for (const response of Object.values(op.responses)) {
      expect(response.headers).toHaveProperty("X-Request-Id");
      if (rateLimit)
        expect(Object.keys(response.headers ?? {})).toEqual(
          expect.arrayContaining(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]),
        );
    }
    if (rateLimit) expect(op.responses["429"].headers).toHaveProperty("Retry-After");
  });

  it.each(OPERATIONS.filter((o) => o.handler.meta.body))("$method $path: shows a request example its body schema accepts", (spec) => {
    const example = operationOf(DOC, spec)!.requestBody!.content["application/json"].example;
    expect(example, "requestExample").toBeDefined();
    const parsed = spec.handler.meta.body!.safeParse(example);
    expect(parsed.success, parsed.error?.message).toBe(true);
  });

  it.each(OPERATIONS.filter((o) => o.docs.responses.some((r) => r.status < 300 && r.schema)))(
    "$method $path: shows a success example its own response schema accepts",
    (spec) => {
      for (const r of spec.docs.responses.filter((x) => x.status < 300 && x.schema)) {
        const example = operationOf(DOC, spec)!.responses[String(r.status)]!.content?.["application/json"]?.example;
        expect(example, `${r.status} example`).toBeDefined();
        const parsed = r.schema!.safeParse(example);
        expect(parsed.success, `${r.status}: ${parsed.error?.message} in ${JSON.stringify(example).slice(0, 300)}`).toBe(true);
      }
    },
  );

  it.each(OPERATIONS)("$method $path: each error-only status shows an example of an error it lists", (spec) => {
    for (const [status, answer] of Object.entries(operationOf(DOC, spec)!.responses)) {
      const codes = answer["x-svc-error-codes"] ?? [];
      const example = answer.content?.["application/json"]?.example as { error: { code: string; type: string } } | undefined;
      if (codes.length === 0 || !example) continue;
      expect(codes, status).toContain(example.error.code);
      expect(ErrorBodySchema.safeParse(example).success, status).toBe(true);
    }
    const errorStatuses = Object.values(operationOf(DOC, spec)!.responses).filter((r) => (r["x-svc-error-codes"] ?? []).length > 0);
    expect(errorStatuses.filter((r) => r.content?.["application/json"]?.example !== undefined).length).toBeGreaterThan(0);
  });

  it("describes the inference headers: cost on 200, the X-Svc explanation on 503, rate limits everywhere", () => {
    const op = DOC.paths["/v1/chat/completions"].post!;
    expect(Object.keys(op.responses["200"].headers ?? {})).toEqual(
      expect.arrayContaining([
        "X-Balance-Remaining",
        "X-Svc-Generation-Id",
        "X-Svc-Cost",
        "X-Svc-Price-Cents",
        "X-Svc-Burn-Diem",
        "X-Svc-Max-Cents",
        "X-RateLimit-Remaining",
      ]),
    );
    expect(Object.keys(op.responses["503"].headers ?? {})).toEqual(
      expect.arrayContaining(["X-Svc-Error-Code", "X-Svc-Buyer-Max-Cents", "X-Svc-Cheapest-Posted-Cents", "X-Svc-Routable-Diem-Above-Max"]),
    );
    expect(op.responses["503"]["x-svc-error-codes"]).toEqual([
      "service_unavailable",
      "shutting_down",
      "no_offer_at_or_below_max",
      "no_capacity",
      "no_healthy_supplier",
      "no_offer_supports_tools",
      "no_offer_supports_json_schema",
      "no_offer_supports_vision",
      "no_offer_matches_provider_only",
      "no_offer_matches_provider_ignore",
      "no_offer_matches_provider_quantizations",
      "no_offer_matches_provider_data_collection",
      "no_offer_matches_provider_cancelled_billing",
      "no_offer_matches_provider_max_price",
      "no_offer_matches_provider_require_verified",
      "no_offer_fits_request",
      "no_offer_passing_probes",
    ]);
    expect(op.responses["503"].headers).toHaveProperty("Retry-After");
    expect(op.responses["405"].headers).toHaveProperty("Allow");
    expect(Object.keys(op.responses["429"].headers ?? {})).toEqual(expect.arrayContaining(["Retry-After", "X-RateLimit-Reset"]));
    expect(op.parameters).toContainEqual({ $ref: "#/components/parameters/MaxCentsHeader" });
    expect(DOC.paths["/v1/x402/top-up"].post!.responses["402"].headers).toHaveProperty("PAYMENT-REQUIRED");
  });
});

describe("GET /openapi.json", () => {
  it("serves the document publicly", async () => {
    const res = await getOpenApiJson(jsonRequest("GET", "/openapi.json"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(DOC)));
  });

  it("describes real answers: every GET without required input answers in its described shape", async () => {
    const me = await seedSignedInAccount();
    const { key } = await createApiKey(me.id, {});
    const simple = OPERATIONS.filter(
      (o) =>
        o.method === "GET" &&
        !o.path.includes("{") &&
        !((operationOf(DOC, o)?.parameters ?? []) as OpenApiParameter[]).some((p) => p.in === "query" && p.required),
    );
    expect(simple.length).toBeGreaterThan(10);
    for (const spec of simple) {
      const { auth } = spec.handler.meta;
      const headers: Record<string, string> =
        auth === "session"
          ? { cookie: me.cookie }
          : auth === "bearer" || auth === "key_or_session"
            ? { authorization: `Bearer ${key}` }
            : {};
      const res = await spec.handler(jsonRequest("GET", spec.path, undefined, headers), routeParams({}));
      const described = spec.docs.responses.find((r) => r.status === res.status);
      expect(described, `${spec.path} answered ${res.status}: ${await res.clone().text()}`).toBeDefined();
      if (!described!.schema) {
        // An answer without a JSON body to check (the ledger's CSV export) must not claim to be JSON.
        expect(res.headers.get("content-type"), spec.path).not.toContain("application/json");
        continue;
      }
      const parsed = described!.schema.safeParse(await res.json());
      expect(parsed.success, `${spec.path}: ${parsed.error?.message}`).toBe(true);
    }
  });
});

// ─── structural checks beyond the official schema (refs, ids, parameters, JSON Schemas) ───────────

const Ref = z.strictObject({ $ref: z.string().startsWith("#/"), summary: z.string().optional(), description: z.string().optional() });
const SchemaLike = z.record(z.string(), z.unknown());
const Media = z.strictObject({ schema: SchemaLike, example: z.unknown().optional() });
const Header = z.union([Ref, z.looseObject({ description: z.string().optional(), schema: SchemaLike })]);
const Parameter = z.union([
  Ref,
  z.strictObject({
    name: z.string().min(1),
    in: z.enum(["query", "header", "path", "cookie"]),
    required: z.boolean(),
    description: z.string().optional(),
    schema: SchemaLike,
  }),
]);
const ResponseObject = z.looseObject({
  description: z.string().min(1),
  headers: z
    .record(
      z.string().refine((h) => h.toLowerCase() !== "content-type", "Content-Type is not a response header"),
      Header,
    )
    .optional(),
  content: z.record(z.string().regex(/^[\w.+-]+\/[\w.+*-]+$/), Media).optional(),
});
const Operation = z.looseObject({
  operationId: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/),
  tags: z.array(z.string()).optional(),
  summary: z.string().optional(),
  description: z.string().optional(),
  parameters: z.array(Parameter).optional(),
  requestBody: z.looseObject({ required: z.boolean().optional(), content: z.record(z.string(), Media) }).optional(),
  responses: z
    .record(z.string().regex(/^([1-5](\d\d|XX)|default)$/), z.union([Ref, ResponseObject]))
    .refine((r) => Object.keys(r).length > 0, "no responses"),
  security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
});
const PathItem = z.strictObject({
  get: Operation.optional(),
  put: Operation.optional(),
  post: Operation.optional(),
  delete: Operation.optional(),
  options: Operation.optional(),
  head: Operation.optional(),
  patch: Operation.optional(),
  trace: Operation.optional(),
});
const SecurityScheme = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("apiKey"), name: z.string(), in: z.enum(["query", "header", "cookie"]) }),
  z.looseObject({ type: z.literal("http"), scheme: z.string() }),
]);
const Document = z.looseObject({
  openapi: z.string().regex(/^3\.1\.\d+$/),
  info: z.looseObject({ title: z.string().min(1), version: z.string().min(1), license: z.looseObject({ name: z.string() }).optional() }),
  jsonSchemaDialect: z.string().optional(),
  servers: z.array(z.looseObject({ url: z.string() })).optional(),
  tags: z.array(z.looseObject({ name: z.string() })).optional(),
  paths: z.record(z.string().startsWith("/"), PathItem),
  components: z.looseObject({
    securitySchemes: z.record(z.string().regex(/^[\w.-]+$/), SecurityScheme),
    schemas: z.record(z.string().regex(/^[\w.-]+$/), SchemaLike),
    headers: z.record(z.string().regex(/^[\w.-]+$/), Header),
    parameters: z.record(z.string().regex(/^[\w.-]+$/), Parameter),
  }),
});

const JSON_TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

/** JSON pointer resolution of a local $ref. */
function resolve(doc: unknown, ref: string): unknown {
  return ref
    .slice(2)
    .split("/")
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce<unknown>((node, part) => (node && typeof node === "object" ? (node as Record<string, unknown>)[part] : undefined), doc);
}

function walk(node: unknown, visit: (value: Record<string, unknown>, at: string) => void, at = "#") {
  if (Array.isArray(node)) node.forEach((v, i) => walk(v, visit, `${at}/${i}`));
  else if (node && typeof node === "object") {
    visit(node as Record<string, unknown>, at);
    for (const [k, v] of Object.entries(node)) walk(v, visit, `${at}/${k}`);
  }
}

/** JSON Schema keywords that must hold a schema, an array of schemas or a map of schemas. */
function checkSchema(schema: unknown, at: string, problems: string[]) {
  if (typeof schema === "boolean") return;
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return void problems.push(`${at}: not a schema`);
  const s = schema as Record<string, unknown>;
  const types = s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
  for (const t of types) if (!JSON_TYPES.has(t as string)) problems.push(`${at}: type ${String(t)}`);
  if (s.enum !== undefined && (!Array.isArray(s.enum) || s.enum.length === 0)) problems.push(`${at}: enum must be a non-empty array`);
  if (s.required !== undefined) {
    if (!Array.isArray(s.required) || s.required.some((r) => typeof r !== "string")) problems.push(`${at}: required must list names`);
    else if (s.properties)
      for (const r of s.required) if (!(r in (s.properties as object))) problems.push(`${at}: required ${r} is not a property`);
  }
  for (const k of ["items", "additionalProperties", "not"])
    if (s[k] !== undefined && typeof s[k] !== "boolean") checkSchema(s[k], `${at}/${k}`, problems);
  for (const k of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    if (s[k] === undefined) continue;
    if (!Array.isArray(s[k]) || (s[k] as unknown[]).length === 0) problems.push(`${at}/${k}: must be a non-empty array`);
    else (s[k] as unknown[]).forEach((sub, i) => checkSchema(sub, `${at}/${k}/${i}`, problems));
  }
  for (const k of ["properties", "$defs", "patternProperties"]) {
    if (s[k] === undefined) continue;
    for (const [name, sub] of Object.entries(s[k] as object)) checkSchema(sub, `${at}/${k}/${name}`, problems);
  }
}

describe("the document is well-formed OpenAPI 3.1", () => {
  const doc = JSON.parse(JSON.stringify(DOC)) as OpenApiDocument;

  it("has the structure of an OpenAPI 3.1 document", () => {
    const result = Document.safeParse(doc);
    expect(result.success, result.error?.message).toBe(true);
  });

  it("validates against the official OpenAPI 3.1 schema", async () => {
    const validator = new Validator();
    const result = await validator.validate(doc as unknown as Record<string, unknown>);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("resolves every $ref", () => {
    const broken: string[] = [];
    walk(doc, (value, at) => {
      if (typeof value.$ref === "string" && resolve(doc, value.$ref) === undefined) broken.push(`${at}: ${value.$ref}`);
    });
    expect(broken).toEqual([]);
  });

  it("has unique operation ids, distinct path templates, and declares each path parameter", () => {
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op!.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    const shapes = Object.keys(doc.paths).map((p) => p.replace(/\{\w+\}/g, "{}"));
    expect(new Set(shapes).size).toBe(shapes.length);

    for (const [p, item] of Object.entries(doc.paths)) {
      const templated = [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      for (const [method, op] of Object.entries(item)) {
        const params = (op!.parameters ?? []).map((x) => ("$ref" in x ? (resolve(doc, x.$ref) as OpenApiParameter) : x));
        expect(
          params
            .filter((x) => x.in === "path")
            .map((x) => x.name)
            .sort(),
          `${method} ${p}`,
        ).toEqual(templated);
        for (const x of params.filter((x) => x.in === "path")) expect(x.required).toBe(true);
        const seen = params.map((x) => `${x.in}:${x.name.toLowerCase()}`);
        expect(new Set(seen).size, `${method} ${p} repeats a parameter`).toBe(seen.length);
      }
    }
  });

  it("names only defined security schemes", () => {
    const schemes = new Set(Object.keys(doc.components.securitySchemes));
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item))
        for (const requirement of op!.security) for (const name of Object.keys(requirement)) expect(schemes).toContain(name);
    }
  });

  it("holds JSON Schemas wherever a schema goes", () => {
    const problems: string[] = [];
    for (const [name, schema] of Object.entries(doc.components.schemas)) checkSchema(schema, `#/components/schemas/${name}`, problems);
    walk(doc.paths, (value, at) => {
      if (value.schema !== undefined) checkSchema(value.schema, `${at}/schema`, problems);
    });
    expect(problems).toEqual([]);
  });
});

// ─── one casing on the wire ─────────────────────────────────────────────────────────────────────

/** Names on the wire that are not ours to choose: the spec's query parameter and the x402 protocol's own body. */
const FOREIGN_NAMES = new Set(["walletAddress"]);
const FOREIGN_SCHEMAS = new Set(["PaymentChallenge", "OpenApiDocument"]);
// Lower case words joined by underscores; a word may start with a digit (window names such as "1h" and "24h").
const SNAKE = /^[a-z0-9]+(_[a-z0-9]+)*$/;

describe("the wire speaks snake_case", () => {
  const doc = JSON.parse(JSON.stringify(DOC)) as OpenApiDocument;

  /** Every property name a JSON Schema declares (objects nested anywhere inside it). */
  function propertyNames(schema: unknown, at: string, found: string[]) {
    walk(schema, (value, where) => {
      if (value.properties && typeof value.properties === "object" && !where.endsWith("/properties")) {
        for (const name of Object.keys(value.properties as object)) found.push(`${at}${where.slice(1)}: ${name}`);
      }
    });
  }

  it("declares no camelCase property in any request or response body, and no camelCase query parameter", () => {
    const found: string[] = [];
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      if (!FOREIGN_SCHEMAS.has(name)) propertyNames(schema, `#/components/schemas/${name}`, found);
    }
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${p}`;
        if (op!.requestBody) propertyNames(op!.requestBody.content["application/json"].schema, `${where} body`, found);
        for (const [status, r] of Object.entries(op!.responses)) {
          const schema = r.content?.["application/json"]?.schema;
          if (schema && !("$ref" in schema)) propertyNames(schema, `${where} ${status}`, found);
        }
        for (const param of op!.parameters ?? [])
          if (!("$ref" in param) && param.in === "query") found.push(`${where} query: ${param.name}`);
      }
    }
    const camel = found.filter((entry) => {
      const name = entry.slice(entry.lastIndexOf(": ") + 2);
      return !SNAKE.test(name) && !FOREIGN_NAMES.has(name);
    });
    expect(found.length).toBeGreaterThan(100);
    expect(camel).toEqual([]);
  });

  it("answers snake_case bodies: every GET without input, read back and walked key by key", async () => {
    const me = await seedSignedInAccount();
    const camel: string[] = [];
    const simple = OPERATIONS.filter(
      (o) => o.method === "GET" && !o.path.includes("{") && !o.handler.meta.query && o.path !== "/openapi.json",
    );
    for (const op of simple) {
      const headers: Record<string, string> = op.handler.meta.auth === "session" ? { cookie: me.cookie } : {};
      const res = await op.handler(jsonRequest("GET", op.path, undefined, headers), routeParams({}));
      walk(await res.json(), (value, at) => {
        for (const name of Object.keys(value)) if (!SNAKE.test(name) && !/^\d+$/.test(name)) camel.push(`${op.path} ${at}: ${name}`);
      });
    }
    expect(camel).toEqual([]);
  });
});
