/**
 * Property test over every route, driven by the OpenAPI description the server publishes (GET /openapi.json, the
 * standard JSON, not lib/openapi's internals): at least 10,000 generated requests per run over real HTTP through
 * the front door to the real route handlers, on the real database, chain and a reference upstream. Each request
 * picks an operation and then valid, boundary or garbage values for its method, path, query, headers and body, with
 * no credentials, the right ones, or wrong ones. The property: no answer is a 5xx, every error answer has the API's
 * error shape, every answer to a request sent as its operation documents (its method, on its path) has a status that
 * operation lists, with an error code listed under that status and only headers of the API's own (X-Svc-*, X-RateLimit-*,
 * Retry-After, PAYMENT-*, Allow, X-Request-Id, X-Balance-Remaining) that it lists there, and the ledger invariants hold afterwards
 * (tests/setup/each-file.ts checks them after the test).
 *
 * The world is built so that no valid request has a legitimate reason for a 5xx: the models the generator calls
 * valid have an offer at 1 cent (every max price routes) on a healthy reference upstream, with ample capacity. One
 * 503 is the request's own doing and allowed: a `provider` preference that excludes every offer
 * (no_offer_matches_provider_*, e.g. data_collection "deny" against offers that have not declared their policy), or
 * every offer at or below the request's max price (no_offer_at_or_below_max, with preferences sent).
 * Garbage includes hostile shapes spliced into a body's text: nesting thousands of levels deep (past MAX_JSON_DEPTH, and
 * deeper than JSON.stringify can write) and very wide arrays, objects and strings, up to and beyond MAX_BODY_BYTES.
 * SVC_FUZZ_SEED=<n> replays a run; SVC_FUZZ_REQUESTS=<n> changes its size. The seed is printed on every run.
 */
import { request } from "node:http";
import { randomBytes } from "node:crypto";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "@/lib/auth/api-keys";
import { createSession } from "@/lib/auth/sessions";
import { buildSiweMessage, type SiweChallenge } from "@/lib/auth/siwe-message";
import { REFERENCE_MODELS } from "../../scripts/reference-upstream/catalog";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { seedSignedInAccount } from "../helpers/factories";
import { seedBuyerBalance, seedSupplierEarnings } from "../helpers/ledger-factories";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { prng, type Rng } from "../helpers/prng";
import { startRouteServer, type RouteServer } from "../helpers/route-server";

// eslint-disable-next-line no-restricted-properties -- test knobs, read once here
const knobs = process.env;
const SEED = Number(knobs.SVC_FUZZ_SEED ?? Date.now() % 2 ** 31);
const REQUESTS = Number(knobs.SVC_FUZZ_REQUESTS ?? 10_000);
const CONCURRENCY = 12;

// ─── the description ─────────────────────────────────────────────────────────

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
  $ref?: string;
};
type Parameter = { name: string; in: "path" | "query" | "header"; required?: boolean; schema: JsonSchema };
type Operation = {
  method: string;
  path: string;
  auth: "public" | "session" | "bearer" | "key_or_session";
  params: Parameter[];
  body?: JsonSchema;
  /** The statuses the operation documents, each with the error codes it lists under it. */
  responses: Record<string, string[]>;
  /** The headers it documents under each status (lower case). */
  headers: Record<string, string[]>;
};
type OpenApi = {
  paths: Record<
    string,
    Record<
      string,
      {
        "x-svc-auth": Operation["auth"];
        parameters?: (Parameter | { $ref: string })[];
        requestBody?: { content: { "application/json": { schema: JsonSchema } } };
        responses: Record<string, { "x-svc-error-codes"?: string[]; headers?: Record<string, unknown> }>;
      }
    >
  >;
  components: { parameters: Record<string, Parameter> };
};

function operationsOf(doc: OpenApi): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      auth: op["x-svc-auth"],
      params: (op.parameters ?? []).map((p) => ("$ref" in p ? doc.components.parameters[p.$ref.split("/").pop()!] : p)),
      body: op.requestBody?.content["application/json"].schema,
      responses: Object.fromEntries(Object.entries(op.responses).map(([status, r]) => [status, r["x-svc-error-codes"] ?? []])),
      headers: Object.fromEntries(
        Object.entries(op.responses).map(([status, r]) => [status, Object.keys(r.headers ?? {}).map((h) => h.toLowerCase())]),
      ),
    })),
  );
}

/** Headers that are the API's own (described in its document), not HTTP's or the server's plumbing. */
const OWN_HEADER = /^(x-svc-|x-ratelimit-|x-balance-|x-request-id$|payment-|retry-after$|allow$)/;

// ─── the world the requests run in ───────────────────────────────────────────

type World = {
  server: RouteServer;
  upstream: ReferenceUpstream;
  models: string[];
  session: string;
  bearer: string;
  offerIds: string[];
  keyIds: string[];
  wallet: string;
};

// ─── values ──────────────────────────────────────────────────────────────────

type Mode = "valid" | "boundary" | "garbage";

const WEIRD_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "💥".repeat(50),
  "../../etc/passwd",
  "%00",
  "' OR 1=1 --",
  "<script>alert(1)</script>",
  "__proto__",
  "constructor",
  "null",
  "1e309",
  "-0",
  "0x",
  "svc_",
  "\u202e",
  "x".repeat(5000),
];
const WEIRD_NUMBERS = [0, -1, 1, 0.5, -0, 1e308, -1e308, 2 ** 53 + 1, 2 ** 63, Number.MIN_VALUE, 10_000, 10_001, 2_147_483_648];
const DECIMALS = [
  "1.00",
  "0.99",
  "1",
  "1.000001",
  "0.000001",
  "10000.00",
  "10000.000001",
  "999999999999999.999999",
  "9223372036854.775807",
  "1e3",
  "-5",
  "01.0",
  ".5",
  "5.",
  "NaN",
  "Infinity",
];

/** Values that mean something to this API, by property name: what `valid` draws from. */
function domainValue(name: string, world: World, rng: Rng): unknown {
  switch (name) {
    case "model":
    case "id":
      return rng.pick(world.models);
    case "models":
      return [rng.pick(world.models)];
    case "walletAddress":
      return world.wallet;
    case "amount":
      return rng.pick(["1.00", "1.50", "2", "5.000000"]);
    case "spend_limit":
      return rng.pick(["25.50", "0.000001", null]);
    case "daily_capacity":
      return rng.pick(["10", "12.5", "0.000001"]);
    case "upstream_base_url":
      return world.upstream.url;
    case "upstream_api_key":
      return world.upstream.apiKey;
    case "upstream_model":
      return "llama-3.3-70b";
    case "content":
      return rng.pick(["hi", "Say something short.", "x".repeat(rng.int(1, 2000))]);
    case "max_tokens":
    case "max_completion_tokens":
      return rng.int(1, 64);
    case "expires_at":
      return rng.pick([new Date(Date.now() + 86_400_000).toISOString(), null]);
    default:
      return undefined;
  }
}

function generate(schema: JsonSchema | undefined, mode: Mode, world: World, rng: Rng, name = "", depth = 0): unknown {
  if (!schema || depth > 6) return null;
  if (mode === "garbage" && rng.chance(0.3)) return garbage(rng, depth);
  if (mode === "valid") {
    const known = domainValue(name, world, rng);
    if (known !== undefined) return known;
  }
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return mode === "boundary" && rng.chance(0.3) ? `${String(rng.pick(schema.enum))}x` : rng.pick(schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return generate(rng.pick(branches), mode, world, rng, name, depth + 1);
  const type = Array.isArray(schema.type) ? rng.pick(schema.type) : schema.type;
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries(schema.properties ?? {})) {
        const required = schema.required?.includes(key) ?? false;
        if (required ? mode !== "valid" && rng.chance(0.1) : rng.chance(0.5)) continue;
        out[key] = generate(sub, mode, world, rng, key, depth + 1);
      }
      if (mode !== "valid" && rng.chance(0.15))
        out[rng.pick(["extra", "__proto__", "permit2Authorization", "a\u0000"])] = garbage(rng, depth + 1);
      return out;
    }
    case "array": {
      const min = schema.minItems ?? 0;
      const max = Math.min(schema.maxItems ?? min + 3, min + 3);
      const length =
        mode === "boundary" ? rng.pick([0, min, Math.max(0, min - 1), (schema.maxItems ?? 3) + 1]) : rng.int(min, Math.max(min, max));
      return Array.from({ length: Math.min(length, 1100) }, () => generate(schema.items, mode, world, rng, name, depth + 1));
    }
    case "string":
      return stringFor(schema, mode, rng, name);
    case "integer":
    case "number": {
      const min = schema.minimum ?? -1000;
      const max = schema.maximum ?? 1000;
      if (mode === "boundary") return rng.pick([min, max, min - 1, max + 1, type === "integer" ? min + 0.5 : min, ...WEIRD_NUMBERS]);
      return type === "integer" ? rng.int(min, max) : min + rng.next() * (max - min);
    }
    case "boolean":
      return rng.chance(0.5);
    case "null":
      return null;
    default:
      return garbage(rng, depth);
  }
}

function stringFor(schema: JsonSchema, mode: Mode, rng: Rng, name: string): string {
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 40, 200);
  if (/amount|limit|capacity/i.test(name) && rng.chance(0.7)) return rng.pick(DECIMALS);
  if (mode === "boundary") {
    const lengths = [min, Math.max(0, min - 1), schema.maxLength ?? 300, (schema.maxLength ?? 300) + 1].filter((n) => n <= 100_001);
    return rng.chance(0.4) ? rng.pick(WEIRD_STRINGS) : "y".repeat(rng.pick(lengths));
  }
  if (schema.format === "date-time") return new Date(Date.now() + rng.int(-1e9, 1e9)).toISOString();
  const alphabet = schema.pattern?.includes("\\x21-\\x7e") ? "abcXYZ019-_.~!" : "abcdefghijklmnopqrstuvwxyz0123456789 -_";
  return Array.from({ length: rng.int(Math.max(1, min), Math.max(1, max)) }, () => alphabet[rng.int(0, alphabet.length - 1)]).join("");
}

/**
 * Stands in a generated value where a hostile shape is spliced into the body's text (bodyFor): JSON.stringify cannot
 * write a value nested 200,000 levels deep, and building a megabyte of values per draw would slow the run.
 */
const HOSTILE = "\u0001hostile shape\u0001";

/**
 * A JSON text built to cost work: nested far deeper than the limit (closed or not), or very wide; each well under the
 * body limit, so the body stays within it and reaches the scan (a body beyond it is refused 413 before it is read,
 * which front-door-limits.test.ts covers).
 */
function hostileShape(rng: Rng): string {
  const depth = rng.pick([60, 64, 1_000, 24_000, 45_000, 200_000]);
  const width = rng.pick([1_000, 40_000, 199_999, 240_000]);
  switch (rng.int(0, 6)) {
    case 0:
      return `${"[".repeat(depth)}${"]".repeat(depth)}`;
    case 1:
      return `${'{"a":'.repeat(Math.min(depth, 45_000))}0${"}".repeat(Math.min(depth, 45_000))}`;
    case 2:
      return `${'[{"a":'.repeat(Math.min(depth, 45_000))}0${"}]".repeat(Math.min(depth, 45_000))}`;
    case 3:
      return "[".repeat(depth);
    case 4:
      return `[${Array(width).fill("0").join(",")}]`;
    case 5:
      return `{${Array.from({ length: Math.min(width, 30_000) }, (_, i) => `"k${i}":${i}`).join(",")}}`;
    default:
      return JSON.stringify('\\"[{'.repeat(rng.int(1, 70_000)));
  }
}

function garbage(rng: Rng, depth = 0): unknown {
  if (rng.chance(0.02)) return HOSTILE;
  const kind = rng.int(0, depth > 3 ? 5 : 8);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.pick(WEIRD_NUMBERS);
    case 2:
      return rng.pick(WEIRD_STRINGS);
    case 3:
      return rng.chance(0.5);
    case 4:
      return rng.pick(DECIMALS);
    case 5:
      return randomBytes(rng.int(1, 16)).toString("base64");
    case 6:
      return Array.from({ length: rng.int(0, 4) }, () => garbage(rng, depth + 1));
    case 7:
      return Object.fromEntries(
        Array.from({ length: rng.int(0, 3) }, () => [
          rng.pick(["a", "model", "amount", "__proto__", "constructor"]),
          garbage(rng, depth + 1),
        ]),
      );
    default:
      return JSON.parse(`${"[".repeat(200)}${"]".repeat(200)}`);
  }
}

// ─── requests ────────────────────────────────────────────────────────────────

type Plan = { op: Operation; method: string; path: string; headers: Record<string, string>; body?: Buffer };
type Answer = { status: number; body: string; contentType: string; headers: string[] };

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND"];

function pathFor(op: Operation, mode: Mode, world: World, rng: Rng): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (mode === "valid") {
      if (op.path.startsWith("/v1/supply/offers")) return rng.pick(world.offerIds);
      if (op.path.startsWith("/v1/account/api-keys")) return rng.pick(world.keyIds);
      if (name === "path") return rng.pick(["nope", "chat/completion", "a/b/c"]);
    }
    return rng.pick([
      "00000000-0000-4000-8000-000000000000",
      "not-a-uuid",
      "%00",
      "%E0%A4%A",
      "..%2F..%2Fhealthz",
      "x".repeat(300),
      "%F0%9F%92%A5",
      "1",
    ]);
  });
}

function queryFor(op: Operation, mode: Mode, world: World, rng: Rng): string {
  const params = new URLSearchParams();
  for (const p of op.params.filter((x) => x.in === "query")) {
    if (!p.required && rng.chance(0.4)) continue;
    const value = generate(p.schema, mode, world, rng, p.name);
    if (value !== undefined) params.append(p.name, typeof value === "string" ? value : JSON.stringify(value));
  }
  if (mode === "garbage" && rng.chance(0.3)) params.append(rng.pick(["x", "model", "limit", "__proto__"]), String(garbage(rng, 5)));
  const text = params.toString();
  return text ? `?${text}` : "";
}

function headersFor(op: Operation, mode: Mode, world: World, rng: Rng): Record<string, string> {
  const headers: Record<string, string> = {};
  const credentials = rng.pick(["right", "right", "right", "none", "wrong", "both", "other"] as const);
  const right =
    op.auth === "bearer"
      ? { authorization: `Bearer ${world.bearer}` }
      : op.auth === "session"
        ? { cookie: world.session }
        : op.auth === "key_or_session"
          ? rng.pick([{ authorization: `Bearer ${world.bearer}` }, { cookie: world.session }])
          : {};
  if (credentials === "right") Object.assign(headers, right);
  if (credentials === "wrong")
    Object.assign(
      headers,
      rng.pick([
        { cookie: "svc_session=nope" },
        { cookie: "__Host-svc_session=x; svc_session=y" },
        { authorization: "Bearer svc_nope" },
        { authorization: "Basic Zm9vOmJhcg==" },
        { authorization: "Bearer" },
      ]),
    );
  if (credentials === "both") Object.assign(headers, { cookie: world.session, authorization: `Bearer ${world.bearer}` });
  if (credentials === "other")
    Object.assign(headers, op.auth === "bearer" ? { cookie: world.session } : { authorization: `Bearer ${world.bearer}` });
  for (const p of op.params.filter((x) => x.in === "header")) {
    if (rng.chance(0.5)) continue;
    const value = mode === "valid" && p.name === "X-Svc-Max-Cents" ? rng.int(1, 10_000) : generate(p.schema, mode, world, rng, p.name);
    headers[p.name.toLowerCase()] = headerSafe(typeof value === "string" ? value : (JSON.stringify(value) ?? ""));
  }
  if (rng.chance(0.1))
    headers["payment-signature"] = rng.pick([
      randomBytes(40).toString("base64"),
      Buffer.from(JSON.stringify(garbage(rng))).toString("base64"),
      "%%%",
    ]);
  if (rng.chance(0.1)) headers["x-forwarded-for"] = rng.pick(["1.2.3.4", "garbage", "::1, 10.0.0.1", ", ,", "1.2.3.4:80"]);
  if (rng.chance(0.05)) headers["x-request-id"] = rng.pick(["ok-id", "bad id with spaces", "x".repeat(500)]);
  if (mode === "garbage" && rng.chance(0.2)) headers.origin = "https://evil.example";
  return headers;
}

/** Header values Node's client can send at all (no control characters, Latin-1). */
function headerSafe(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, "?").slice(0, 4000);
}

function bodyFor(op: Operation, mode: Mode, world: World, rng: Rng, headers: Record<string, string>): Buffer | undefined {
  const schema = op.body;
  if (!schema && !rng.chance(0.1)) return undefined;
  headers["content-type"] =
    mode === "garbage" && rng.chance(0.2)
      ? rng.pick(["text/plain", "application/jsonx", "multipart/form-data", "application/json; charset=latin1"])
      : "application/json";
  if (mode === "garbage" && rng.chance(0.3)) {
    return rng.pick([
      Buffer.from("{"),
      Buffer.from(""),
      Buffer.from([0xff, 0xfe, 0x00, 0x7b]),
      Buffer.from('{"a":1}{"b":2}'),
      Buffer.from("\u0000"),
    ]);
  }
  const text = JSON.stringify(generate(schema ?? { type: "object" }, mode, world, rng)) ?? "null";
  let spliced = 0;
  return Buffer.from(text.replaceAll(JSON.stringify(HOSTILE), () => (spliced++ === 0 ? hostileShape(rng) : "null")));
}

function plan(ops: Operation[], world: World, rng: Rng): Plan {
  const op = rng.pick(ops);
  const mode = rng.pick(["valid", "valid", "boundary", "garbage"] as const);
  const method = rng.chance(0.9) ? op.method : rng.pick(METHODS);
  const headers = headersFor(op, mode, world, rng);
  const body = method === "GET" || method === "HEAD" ? undefined : bodyFor(op, mode, world, rng, headers);
  return { op, method, path: `${pathFor(op, mode, world, rng)}${queryFor(op, mode, world, rng)}`, headers, body };
}

function send(baseUrl: string, p: Plan): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}${p.path}`,
      { method: p.method, headers: p.body ? { ...p.headers, "content-length": String(p.body.length) } : p.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString("utf8"),
            contentType: String(res.headers["content-type"] ?? ""),
            headers: Object.keys(res.headers),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(p.body);
  });
}

// ─── the run ─────────────────────────────────────────────────────────────────

let world: World;

beforeAll(async () => {
  // Every feature served: a request that uses tools, JSON schema or images has no legitimate reason for a 503 either.
  const every = { supportsTools: true, supportsJsonSchema: true, supportsVision: true };
  const models = [(await seedPrivateModel(every)).id, (await seedPrivateModel(every)).id];
  const upstream = await startReferenceUpstream({
    port: 0,
    models: [...REFERENCE_MODELS, ...models.map((id) => ({ ...REFERENCE_MODELS[0], id, name: id }))],
  });
  // The routable offers belong to another supplier: nothing the fuzzer's own session does can take them away.
  for (const id of models) {
    await seedOffer({
      models: [id],
      priceCents: 1,
      dailyCapacityMicroDiem: 1_000_000n * 1_000_000n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
      features: { tools: true, json_schema: true, vision: true },
    });
  }
  const buyer = await seedSignedInAccount();
  await seedBuyerBalance(buyer.id, 100n * 1_000_000n);
  const bearer = (await createApiKey(buyer.id, {})).key;
  const me = await seedSignedInAccount();
  await seedSupplierEarnings(me.id, 20n * 1_000_000n);
  const ownOffer = await seedOffer({
    supplierId: me.id,
    models: [models[0]],
    priceCents: 50,
    dailyCapacityMicroDiem: 10_000_000n,
    upstreamBaseUrl: upstream.url,
    upstreamApiKey: upstream.apiKey,
  });
  const ownKey = await createApiKey(me.id, { name: "fuzz" });
  world = {
    server: await startRouteServer(),
    upstream,
    models,
    session: me.cookie,
    bearer,
    offerIds: [ownOffer.id],
    keyIds: [ownKey.id],
    wallet: privateKeyToAccount(generatePrivateKey()).address,
  };
});

afterAll(async () => {
  await world?.server.stop();
  await world?.upstream.stop();
});

describe("every route, from the OpenAPI description", () => {
  it(
    `answers ${REQUESTS} generated requests without a 5xx, every error in the API's shape (seed printed)`,
    { timeout: 240_000 },
    async () => {
      console.log(`fuzz-routes: seed ${SEED} (replay with SVC_FUZZ_SEED=${SEED}), ${REQUESTS} requests`);
      const doc = (await (await fetch(`${world.server.url}/openapi.json`)).json()) as OpenApi;
      // Logging out with the fuzzer's own session would end the run's session: that operation gets a fresh one each time.
      const ops = operationsOf(doc);
      expect(ops.length).toBeGreaterThan(30);
      const rng = prng(SEED);
      const statuses = new Map<number, number>();
      const failures: string[] = [];
      let sent = 0;
      let signIns = 0;
      let hostile = 0;
      const started = performance.now();

      const worker = async () => {
        while (sent < REQUESTS) {
          sent++;
          const p = plan(ops, world, rng);
          if (p.path.startsWith("/auth/logout") && p.headers.cookie === world.session) {
            const { token } = await createSession((await seedSignedInAccount()).id);
            p.headers.cookie = `svc_session=${token}`;
          }
          if (p.path.startsWith("/auth/verify") && p.method === "POST" && rng.chance(0.2)) {
            await signInOnce(world.server.url);
            signIns++;
          }
          if (p.body && p.body.length > 20_000) hostile++;
          const answer = await send(world.server.url, p);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          const problem = checkAnswer(p, answer);
          if (problem && failures.length < 20)
            failures.push(`${p.method} ${p.path.slice(0, 120)} → ${answer.status}: ${problem} ${answer.body.slice(0, 200)}`);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));

      const seconds = (performance.now() - started) / 1000;
      const histogram = [...statuses.entries()]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}:${n}`)
        .join(" ");
      console.log(
        `fuzz-routes: ${sent} requests (+${signIns} real sign-ins, ${hostile} bodies over 20 kB) in ${seconds.toFixed(1)} s (${Math.round(sent / seconds)}/s); statuses ${histogram}`,
      );
      expect(failures, `seed ${SEED}`).toEqual([]);
      expect(sent).toBeGreaterThanOrEqual(REQUESTS);
      // The generator reached past the guards: real successes of several kinds, not only 4xx.
      expect([...statuses.keys()].filter((s) => s >= 200 && s < 300).length).toBeGreaterThanOrEqual(2);
    },
  );
});

/**
 * A 503 that says the request's own provider preferences left no offer (documented, and its own doing): either none
 * meets them, or the ones that do are above the request's max price or out of today's capacity (the 1-cent offers have
 * declared no data policy, so `data_collection: "deny"` leaves only the fuzzer's own offers, posted at any price and
 * with as little as 0.000001 diem a day).
 */
function excludedByOwnPreferences(p: Plan, answer: Answer): boolean {
  if (answer.status !== 503 || !answer.contentType.startsWith("application/json")) return false;
  const code = (JSON.parse(answer.body) as { error?: { code?: unknown } }).error?.code;
  if (typeof code !== "string") return false;
  return (
    code.startsWith("no_offer_matches_provider_") ||
    (["no_offer_at_or_below_max", "no_capacity"].includes(code) && sentProviderPreferences(p))
  );
}

function sentProviderPreferences(p: Plan): boolean {
  try {
    const body = JSON.parse(String(p.body)) as { provider?: unknown };
    return typeof body.provider === "object" && body.provider !== null;
  } catch {
    return false;
  }
}

/** What every answer must satisfy. */
function checkAnswer(p: Plan, answer: Answer): string | null {
  if (answer.status >= 500 && !excludedByOwnPreferences(p, answer)) return "a 5xx";
  if (answer.status >= 400 && p.method !== "HEAD" && answer.body !== "") {
    if (!answer.contentType.startsWith("application/json")) return `an error that is not JSON (${answer.contentType})`;
    const body = JSON.parse(answer.body) as { error?: { message?: unknown; type?: unknown; code?: unknown }; x402Version?: number };
    if (answer.status === 402 && body.x402Version === 1) return null; // the top-up's x402 challenge, documented as such
    if (typeof body.error?.message !== "string" || typeof body.error.type !== "string" || typeof body.error.code !== "string")
      return "an error without {message,type,code}";
    if (sentAsDocumented(p) && !(p.op.responses[answer.status] ?? []).includes(body.error.code))
      return `${answer.status} ${body.error.code}, which its OpenAPI operation does not list under ${answer.status}`;
  }
  if (sentAsDocumented(p) && !(String(answer.status) in p.op.responses))
    return `${answer.status}, a status its OpenAPI operation does not list`;
  if (sentAsDocumented(p)) {
    const undocumented = answer.headers.filter((h) => OWN_HEADER.test(h) && !p.op.headers[String(answer.status)]!.includes(h));
    if (undocumented.length > 0)
      return `${answer.status} with ${undocumented.join(", ")}, which its OpenAPI operation does not list under ${answer.status}`;
  }
  return null;
}

/**
 * The request went to the operation it was planned from: its method, on a path no other route can take (a generated
 * path parameter with a slash or a dot segment can land on another route, e.g. the /v1 catch-all), that is a path.
 */
function sentAsDocumented(p: Plan): boolean {
  if (p.method !== p.op.method || p.op.path.endsWith("{path}")) return false;
  const pathname = p.path.split("?")[0];
  // A malformed %-escape is answered a bare 400 before any route runs (Next does so, and the test route server).
  try {
    decodeURIComponent(pathname);
  } catch {
    return false;
  }
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const template = new RegExp(
    `^${p.op.path
      .split(/\{\w+\}/)
      .map(literal)
      .join("[^/]+")}$`,
  );
  return template.test(pathname) && !/(^|\/)\.\.?(\/|$)|%2e|%2f/i.test(pathname);
}

/** A real SIWE sign-in of a fresh wallet, so the valid path of /auth/verify is exercised too. */
async function signInOnce(baseUrl: string) {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const nonce = await fetch(`${baseUrl}/auth/nonce?walletAddress=${wallet.address}`);
  // The fuzzer's own traffic can spend the address's sign-in rate limit: a 429 is an answer, a 5xx a failure.
  if (nonce.status === 429) return;
  expect(nonce.status, await nonce.clone().text()).toBe(200);
  const challenge = (await nonce.json()) as SiweChallenge;
  const message = buildSiweMessage(challenge, wallet.address);
  const res = await fetch(`${baseUrl}/auth/verify`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message, signature: await wallet.signMessage({ message }) }),
  });
  if (res.status === 429) return;
  expect(res.status, await res.clone().text()).toBe(200);
}
