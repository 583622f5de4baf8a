import "server-only";
import { metrics } from "@/lib/ops/metrics";
import { currentRequestContext } from "@/lib/ops/request-context";
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { defaultUpstreamPolicy, normalizeBaseUrl, upstreamTargetRefusal, type UpstreamPolicy } from "@/lib/upstream/ssrf";
import { parseMicros } from "@/lib/money";
import { env } from "@/lib/env";
import { exceededJsonLimit } from "@/lib/json-limits";

/**
 * The only way the service talks to a supplier's upstream. Built on node:http/https rather than
 * fetch so that we resolve the host ourselves: every resolved address must pass the SSRF policy,
 * and the socket connects to exactly the address that passed (no DNS rebinding between check and
 * connect). Redirects are never followed; every call has a deadline and a response size cap.
 * The API key travels only in the Authorization header and never appears in errors or logs.
 */

export type OfferCredentials = { baseUrl: string; apiKey: string };

export type UpstreamResponse = { status: number; json: unknown | null; rawText: string };

export type UpstreamErrorKind = "forbidden_address" | "invalid_url" | "timeout" | "network" | "too_large";

/**
 * How far a call got when it failed, which is what tells whose failure it is (lib/router/upstream-failure.ts):
 * `queued` waiting for a free socket in our own pool (the upstream has seen nothing: our limit, not its fault);
 * `connecting` resolving its host or opening a connection (it has seen nothing of the request);
 * `sent` connected and the request sent or being sent, no answer yet;
 * `receiving` the answer's headers arrived, its body did not finish.
 */
export type UpstreamStage = "queued" | "connecting" | "sent" | "receiving";

/** A call that produced no HTTP response (or an oversized one). Its message is safe to show and log. */
export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamErrorKind,
    message: string,
    readonly stage: UpstreamStage = "connecting",
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}

/** Resolves a host name to addresses; injectable so tests can simulate DNS answers. */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export type RequestOptions = {
  timeoutMs?: number;
  maxResponseBytes?: number;
  policy?: UpstreamPolicy;
  resolver?: Resolver;
};

export const DEFAULT_TIMEOUT_MS = 30_000;
export const MODELS_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

const USER_AGENT = "svc-marketplace/0.1";
/** Sent with every forwarded chat request; svc refuses chat requests that carry it (no nested clears). */
export const HOP_HEADER = "x-svc-hop";

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

// Dedicated keep-alive pools per policy: a pooled socket is always one our own lookup connected.
const agents = new Map<string, http.Agent>();
function agentFor(protocol: "http:" | "https:", policy: UpstreamPolicy): http.Agent {
  const key = `${protocol}${policy.allowPrivate}`;
  let agent = agents.get(key);
  if (!agent) {
    // As many idle sockets kept as may be open: with fewer, every request beyond them under load opened (and
    // closed) a new connection to the upstream.
    const options = { keepAlive: true, maxSockets: 64, maxFreeSockets: 64, timeout: 60_000 };
    agent = protocol === "https:" ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

/** A `lookup` for net.connect that resolves with `resolver` and fails unless every address is allowed. */
function checkedLookup(policy: UpstreamPolicy, resolver: Resolver, port: number): LookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname)
      .then(async (all) => {
        const wanted = options.family ? all.filter((a) => a.family === options.family) : all;
        if (wanted.length === 0) throw Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" });
        for (const a of wanted) {
          const refusal = await upstreamTargetRefusal(a.address, port, policy);
          if (refusal) throw new UpstreamError("forbidden_address", `Upstream host ${hostname} resolves to ${refusal}.`);
        }
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0].address, wanted[0].family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, "", 0));
  };
}

async function request(
  method: "GET" | "POST",
  target: string,
  apiKey: string,
  body: string | undefined,
  options: RequestOptions & { headers?: Record<string, string> },
): Promise<UpstreamResponse> {
  const policy = options.policy ?? defaultUpstreamPolicy();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new UpstreamError("invalid_url", "The upstream URL is not valid.");
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && policy.allowPrivate)) {
    throw new UpstreamError("forbidden_address", `Upstream URLs must use https (got ${url.protocol}).`);
  }
  if (url.username || url.password) throw new UpstreamError("invalid_url", "The upstream URL must not contain credentials.");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  // net.connect skips `lookup` for IP literals, so they are checked here.
  const refusal = isIP(host) ? await upstreamTargetRefusal(host, port, policy) : null;
  if (refusal) throw new UpstreamError("forbidden_address", `Upstream address ${host} is ${refusal}.`);
  const transport = url.protocol === "https:" ? https : http;
  const headers: Record<string, string | number> = {
    authorization: `Bearer ${apiKey}`,
    accept: "application/json",
    "accept-encoding": "identity",
    "user-agent": USER_AGENT,
    ...options.headers,
  };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    headers["content-length"] = Buffer.byteLength(body);
  }

  return new Promise<UpstreamResponse>((resolve, reject) => {
    let settled = false;
    let stage: UpstreamStage = "queued";
    const finish = (error: Error | null, value?: UpstreamResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(value!);
    };
    const req = transport.request(
      {
        method,
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        headers,
        agent: agentFor(url.protocol as "http:" | "https:", policy),
        lookup: checkedLookup(policy, options.resolver ?? systemResolver, port),
        servername: isIP(host) ? undefined : host,
      },
      (res) => {
        stage = "receiving";
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            const error = new UpstreamError("too_large", `The upstream response exceeded ${maxBytes} bytes.`, stage);
            finish(error);
            req.destroy(error);
            return;
          }
          chunks.push(chunk);
        });
        res.on("end", () => {
          const rawText = Buffer.concat(chunks).toString("utf8");
          finish(null, { status: res.statusCode ?? 0, json: parseJson(rawText), rawText });
        });
        res.on("error", (error) => finish(toUpstreamError(error, stage)));
      },
    );
    const timer = setTimeout(() => {
      const error = new UpstreamError("timeout", `The upstream did not answer within ${timeoutMs} ms.`, stage);
      finish(error);
      req.destroy(error);
    }, timeoutMs);
    // A pooled socket is connected already; a new one is not until its `connect`.
    req.on("socket", (socket) => {
      if (!socket.connecting) {
        if (stage === "queued") stage = "sent";
        return;
      }
      stage = "connecting";
      socket.once("connect", () => {
        if (stage === "connecting") stage = "sent";
      });
    });
    req.on("error", (error) => finish(toUpstreamError(error, stage)));
    req.end(body);
  });
}

/**
 * The answer's JSON, or null when it is not JSON or nests deeper than a request may (MAX_JSON_DEPTH): nothing svc
 * reads in an answer nests that deep, and what does would overflow the stack of JSON.stringify (a tool call's arguments
 * sent as an object, the logprobs the buyer's answer carries), after the clear. Its width is the response size cap's.
 */
function parseJson(text: string): unknown | null {
  if (exceededJsonLimit(text, { maxDepth: env.MAX_JSON_DEPTH, maxValues: Number.POSITIVE_INFINITY })) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function toUpstreamError(error: Error, stage: UpstreamStage): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code === "ENOTFOUND" || code === "EAI_AGAIN" ? "its host name does not resolve" : code ? code : "connection failed";
  // A connection that broke after the request went out is not "could not reach".
  const message =
    stage === "queued" || stage === "connecting"
      ? `Could not reach the upstream: ${reason}.`
      : `The upstream connection failed: ${reason}.`;
  return new UpstreamError("network", message, stage === "queued" ? "connecting" : stage);
}

function joinUrl(baseUrl: string, path: string): string {
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    throw new UpstreamError("invalid_url", "The upstream base URL is not valid.");
  }
  return `${normalizeBaseUrl(base)}${path}`;
}

/**
 * Forwards one chat completion, exactly once (no retries), with the hop header. Any HTTP answer is returned
 * as `{status, json, rawText}` (json null when the body is not JSON); no answer at all, a forbidden address,
 * a timeout or an oversized body throws UpstreamError. A string body is sent as is (it is JSON already).
 */
export async function postChatCompletion(args: {
  baseUrl: string;
  apiKey: string;
  body: unknown;
  timeoutMs?: number;
  maxResponseBytes?: number;
  policy?: UpstreamPolicy;
  resolver?: Resolver;
}): Promise<UpstreamResponse> {
  const { baseUrl, apiKey, body, ...options } = args;
  const text = typeof body === "string" ? body : JSON.stringify(body);
  // The buyer's request id goes upstream too, so a supplier's logs and ours name the same request.
  const context = currentRequestContext();
  const headers = { [HOP_HEADER]: "1", ...(context?.requestId && { "x-request-id": context.requestId }) };
  const started = performance.now();
  try {
    return await request("POST", joinUrl(baseUrl, "/chat/completions"), apiKey, text, { ...options, headers });
  } finally {
    metrics.upstreamLatency.observe({ offer: context?.offerId ?? "unknown" }, (performance.now() - started) / 1000);
  }
}

/** List price as published by the upstream, diem (= USD for Venice) per 1M tokens, in micro-diem. */
export type UpstreamPricing = { inputMicroDiemPerMTok: bigint; outputMicroDiemPerMTok: bigint };

/** What the upstream says a model supports; a feature it does not mention is undefined (it did not tell). */
export type UpstreamFeatures = { tools?: boolean; json_schema?: boolean; vision?: boolean };

export type UpstreamModel = { id: string; pricing: UpstreamPricing | null; features: UpstreamFeatures };

export type UpstreamModelList =
  { ok: true; models: UpstreamModel[] } | { ok: false; reason: "auth_failed" | "bad_status" | "bad_body"; status: number };

/**
 * GET {base}/models with the supplier's key (5 s deadline by default). Reads OpenAI's `{data:[{id}]}`
 * and, where present, Venice's `model_spec.pricing.{input,output}.{diem,usd}` and `model_spec.capabilities`,
 * or OpenRouter's `supported_parameters` and `architecture.input_modalities`. Throws UpstreamError
 * when nothing answered; an answer that is not a model list is `{ok:false}` with the reason.
 */
export async function listUpstreamModels(credentials: OfferCredentials, options: RequestOptions = {}): Promise<UpstreamModelList> {
  const res = await request("GET", joinUrl(credentials.baseUrl, "/models"), credentials.apiKey, undefined, {
    timeoutMs: MODELS_TIMEOUT_MS,
    ...options,
  });
  if (res.status === 401 || res.status === 403) return { ok: false, reason: "auth_failed", status: res.status };
  if (res.status < 200 || res.status > 299) return { ok: false, reason: "bad_status", status: res.status };
  const data = Array.isArray(res.json) ? res.json : (res.json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return { ok: false, reason: "bad_body", status: res.status };
  const models: UpstreamModel[] = [];
  for (const entry of data as ({ id?: unknown; model_spec?: { pricing?: unknown; capabilities?: unknown } } & Record<string, unknown>)[]) {
    if (typeof entry?.id !== "string") continue;
    models.push({ id: entry.id, pricing: readVenicePricing(entry.model_spec?.pricing), features: readFeatures(entry) });
  }
  return { ok: true, models };
}

function readFeatures(entry: { model_spec?: { capabilities?: unknown } } & Record<string, unknown>): UpstreamFeatures {
  const features: UpstreamFeatures = {};
  const caps = entry.model_spec?.capabilities as Record<string, unknown> | undefined;
  const flag = (value: unknown) => (typeof value === "boolean" ? value : undefined);
  if (caps && typeof caps === "object") {
    features.tools = flag(caps.supportsFunctionCalling);
    features.json_schema = flag(caps.supportsResponseSchema);
    features.vision = flag(caps.supportsVision);
  }
  const params = entry.supported_parameters;
  if (Array.isArray(params)) {
    features.tools ??= params.includes("tools");
    features.json_schema ??= params.includes("structured_outputs");
  }
  const modalities = (entry.architecture as { input_modalities?: unknown } | undefined)?.input_modalities;
  if (Array.isArray(modalities)) features.vision ??= modalities.includes("image");
  return features;
}

function readVenicePricing(pricing: unknown): UpstreamPricing | null {
  const p = pricing as { input?: Record<string, unknown>; output?: Record<string, unknown> } | undefined;
  const input = priceMicros(p?.input?.diem ?? p?.input?.usd);
  const output = priceMicros(p?.output?.diem ?? p?.output?.usd);
  return input === null || output === null ? null : { inputMicroDiemPerMTok: input, outputMicroDiemPerMTok: output };
}

/** A JSON price (number or decimal string) in micro-units; JSON numbers are rounded to 6 places first. */
function priceMicros(value: unknown): bigint | null {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 && value < 1e9 ? parseMicros(value.toFixed(6)) : null;
  if (typeof value === "string") return parseMicros(value.trim());
  return null;
}
