import "server-only";
import { metrics } from "@/lib/ops/metrics";
import { currentRequestContext } from "@/lib/ops/request-context";
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { allowsPlainHttp, defaultUpstreamPolicy, normalizeBaseUrl, upstreamTargetRefusal, type UpstreamPolicy } from "@/lib/upstream/ssrf";
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

/**
 * Which deadline a timeout missed: a streamed call's first byte, the silence between its chunks, or the whole call
 * (a non-streaming call has only that one).
 */
export type UpstreamDeadline = "first_byte" | "idle" | "total";

/** A call that produced no HTTP response (or an oversized one). Its message is safe to show and log. */
export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamErrorKind,
    message: string,
    readonly stage: UpstreamStage = "connecting",
    /** For a timeout, the deadline it missed; null otherwise. */
    readonly deadline: UpstreamDeadline | null = null,
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

// Dedicated keep-alive pools per policy: a pooled socket is always one our own lookup connected, under that policy.
const agents = new Map<string, http.Agent>();
function agentFor(protocol: "http:" | "https:", policy: UpstreamPolicy): http.Agent {
  const key = `${protocol}${policy.allowPrivate}:${policy.trusted?.key ?? ""}`;
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
          const refusal = await upstreamTargetRefusal(a.address, port, policy, hostname);
          if (refusal) throw new UpstreamError("forbidden_address", `Upstream host ${hostname} resolves to ${refusal}.`);
        }
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0].address, wanted[0].family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, "", 0));
  };
}

type PreparedRequest = { transport: typeof http | typeof https; options: https.RequestOptions };

/**
 * Everything checked before a connection is opened (the URL's scheme and credentials, an IP literal's address) and the
 * request's options: our pooled agent, and a lookup that checks every address the host resolves to.
 */
async function prepareRequest(
  method: "GET" | "POST",
  target: string,
  apiKey: string,
  body: string | undefined,
  options: RequestOptions & { headers?: Record<string, string> },
): Promise<PreparedRequest> {
  const policy = options.policy ?? defaultUpstreamPolicy();
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new UpstreamError("invalid_url", "The upstream URL is not valid.");
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (url.protocol !== "https:" && !(url.protocol === "http:" && allowsPlainHttp(host, policy))) {
    throw new UpstreamError("forbidden_address", `Upstream URLs must use https (got ${url.protocol}).`);
  }
  if (url.username || url.password) throw new UpstreamError("invalid_url", "The upstream URL must not contain credentials.");
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  // net.connect skips `lookup` for IP literals, so they are checked here.
  const refusal = isIP(host) ? await upstreamTargetRefusal(host, port, policy) : null;
  if (refusal) throw new UpstreamError("forbidden_address", `Upstream address ${host} is ${refusal}.`);
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
  return {
    transport: url.protocol === "https:" ? https : http,
    options: {
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
  };
}

/** Follows how far a request got (UpstreamStage) as it waits for, and then opens, its socket. */
function watchStage(req: http.ClientRequest, progress: { stage: UpstreamStage }): void {
  // A pooled socket is connected already; a new one is not until its `connect`.
  req.on("socket", (socket) => {
    if (!socket.connecting) {
      if (progress.stage === "queued") progress.stage = "sent";
      return;
    }
    progress.stage = "connecting";
    socket.once("connect", () => {
      if (progress.stage === "connecting") progress.stage = "sent";
    });
  });
}

async function request(
  method: "GET" | "POST",
  target: string,
  apiKey: string,
  body: string | undefined,
  options: RequestOptions & { headers?: Record<string, string> },
): Promise<UpstreamResponse> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const { transport, options: requestOptions } = await prepareRequest(method, target, apiKey, body, options);

  return new Promise<UpstreamResponse>((resolve, reject) => {
    let settled = false;
    const progress: { stage: UpstreamStage } = { stage: "queued" };
    const finish = (error: Error | null, value?: UpstreamResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(value!);
    };
    const req = transport.request(requestOptions, (res) => {
      progress.stage = "receiving";
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          const error = new UpstreamError("too_large", `The upstream response exceeded ${maxBytes} bytes.`, progress.stage);
          finish(error);
          req.destroy(error);
          return;
        }
        chunks.push(chunk);
      });
      res.on("end", () => {
        const rawText = Buffer.concat(chunks).toString("utf8");
        finish(null, { status: res.statusCode ?? 0, json: parseUpstreamJson(rawText), rawText });
      });
      res.on("error", (error) => finish(toUpstreamError(error, progress.stage)));
    });
    const timer = setTimeout(() => {
      const error = new UpstreamError("timeout", `The upstream did not answer within ${timeoutMs} ms.`, progress.stage, "total");
      finish(error);
      req.destroy(error);
    }, timeoutMs);
    watchStage(req, progress);
    req.on("error", (error) => finish(toUpstreamError(error, progress.stage)));
    req.end(body);
  });
}

/**
 * The answer's JSON, or null when it is not JSON or nests deeper than a request may (MAX_JSON_DEPTH): nothing svc
 * reads in an answer nests that deep, and what does would overflow the stack of JSON.stringify (a tool call's arguments
 * sent as an object, the logprobs the buyer's answer carries), after the clear. Its width is the response size cap's.
 */
export function parseUpstreamJson(text: string): unknown | null {
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
  const started = performance.now();
  try {
    return await request("POST", joinUrl(baseUrl, "/chat/completions"), apiKey, text, { ...options, headers: forwardHeaders() });
  } finally {
    observeLatency(started);
  }
}

/** The hop header, and the buyer's request id, so that a supplier's logs and ours name the same request. */
function forwardHeaders(): Record<string, string> {
  const context = currentRequestContext();
  return { [HOP_HEADER]: "1", ...(context?.requestId && { "x-request-id": context.requestId }) };
}

function observeLatency(started: number): void {
  const offer = currentRequestContext()?.offerId ?? "unknown";
  metrics.upstreamLatency.observe({ offer }, (performance.now() - started) / 1000);
}

export type StreamDeadlines = {
  /** From sending the request to the first byte of the answer's body (a slow first token). */
  firstByteTimeoutMs: number;
  /** The longest silence between two chunks of the body, while the caller is reading. */
  idleTimeoutMs: number;
  /** The whole call, however it goes (a slow reader's time counts too). */
  totalTimeoutMs: number;
};

export const DEFAULT_STREAM_DEADLINES: StreamDeadlines = {
  firstByteTimeoutMs: DEFAULT_TIMEOUT_MS,
  idleTimeoutMs: DEFAULT_TIMEOUT_MS,
  totalTimeoutMs: 600_000,
};

/**
 * The most a streamed answer may send: the longest answers models give (~128k output tokens) one token a chunk, each
 * chunk ~500 bytes with its envelope. What svc keeps of it is bounded by the answer it accumulates (stream-answer.ts).
 */
export const DEFAULT_MAX_STREAM_BYTES = 64 * 1024 * 1024;

/**
 * How an answer's body is to be read, from its content type: JSON (an upstream that answered without streaming, or
 * an error) or an event stream (anything else: servers label their streams loosely, and a stream was asked for).
 */
export function bodyFormat(contentType: string | undefined): "json" | "event-stream" {
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase();
  return type === "application/json" || type.endsWith("+json") ? "json" : "event-stream";
}

/**
 * A streamed call whose answer's headers arrived: its status and headers, its body to read as it comes. The call holds
 * its connection until the body is read to its end, abort() is called or the total deadline passes: a caller that
 * gives up on it aborts it.
 */
export type UpstreamStream = {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** "json": read the answer whole with read() (and replay it as a stream); so too any status but 200. */
  format: "json" | "event-stream";
  /**
   * The body as it arrives, read on demand: while the caller does not ask for the next chunk, the socket is paused (the
   * upstream's writes block once the buffers between are full). Read once. Throws UpstreamError on a timeout (its
   * `deadline` says which), a broken connection (`network`) or more than the byte bound (`too_large`); the reason
   * given to abort() once aborted. Leaving the loop early aborts the call.
   */
  body: AsyncIterable<Buffer>;
  /** The whole body as postChatCompletion returns it (at most DEFAULT_MAX_RESPONSE_BYTES), instead of `body`. */
  read(): Promise<UpstreamResponse>;
  /**
   * Ends the call at once: the connection to the upstream is destroyed, so its server sees the client gone and stops
   * generating. A read in progress, and any later one, throws `reason` (an AbortError by default).
   */
  abort(reason?: Error): void;
};

/**
 * Forwards one chat completion that asks for a stream (the body says `stream: true`; it is sent as given), exactly once,
 * under the same rules as postChatCompletion (SSRF checks at connection time, our pooled agents, the hop header and
 * request id, how far a failure got). Resolves as soon as the answer's headers arrive, with the body to read as it
 * comes; rejects with UpstreamError when none arrive (a first-byte or total timeout, no connection, a forbidden address)
 * or with the signal's reason when it aborts first.
 */
export async function streamChatCompletion(args: {
  baseUrl: string;
  apiKey: string;
  body: unknown;
  deadlines?: Partial<StreamDeadlines>;
  maxResponseBytes?: number;
  signal?: AbortSignal;
  policy?: UpstreamPolicy;
  resolver?: Resolver;
}): Promise<UpstreamStream> {
  const { baseUrl, apiKey, body, signal, policy, resolver } = args;
  const deadlines = { ...DEFAULT_STREAM_DEADLINES, ...args.deadlines };
  const maxBytes = args.maxResponseBytes ?? DEFAULT_MAX_STREAM_BYTES;
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const headers = { ...forwardHeaders(), accept: "text/event-stream, application/json" };
  const { transport, options } = await prepareRequest("POST", joinUrl(baseUrl, "/chat/completions"), apiKey, text, {
    policy,
    resolver,
    headers,
  });
  signal?.throwIfAborted();
  const started = performance.now();

  return new Promise<UpstreamStream>((resolve, reject) => {
    const progress: { stage: UpstreamStage } = { stage: "queued" };
    let res: http.IncomingMessage | null = null;
    let resolved = false;
    /** Why the call ended early (a timeout, a break, an abort), once it did. */
    let failure: Error | null = null;
    let over = false;
    let idleTimer: NodeJS.Timeout | undefined;

    const end = () => {
      over = true;
      clearTimeout(totalTimer);
      clearTimeout(firstByteTimer);
      clearTimeout(idleTimer);
      signal?.removeEventListener("abort", onAbort);
    };
    /** Ends the call early; `upstream` when it was the upstream's doing (its latency is observed then, not on an abort). */
    const fail = (error: Error, upstream = true) => {
      if (over) return;
      end();
      failure = error;
      if (upstream) observeLatency(started);
      if (!resolved) reject(error);
      res?.destroy(error);
      req.destroy(error);
    };
    const timeout = (deadline: UpstreamDeadline, ms: number) => {
      const what = { first_byte: "sent no first byte", idle: "went silent", total: "did not finish" }[deadline];
      return new UpstreamError("timeout", `The upstream ${what} within ${ms} ms.`, progress.stage, deadline);
    };
    const onAbort = () => fail(signal!.reason instanceof Error ? signal!.reason : abortError(), false);

    const totalTimer = setTimeout(() => fail(timeout("total", deadlines.totalTimeoutMs)), deadlines.totalTimeoutMs);
    // Bytes that arrived while the caller was not reading are a first byte all the same.
    const firstByteTimer = setTimeout(() => {
      if (!res || res.readableLength === 0) fail(timeout("first_byte", deadlines.firstByteTimeoutMs));
    }, deadlines.firstByteTimeoutMs);

    const req = transport.request(options, (response) => {
      res = response;
      progress.stage = "receiving";
      // Errors reach the reader through `failure` (or the iterator); this keeps an unread body's error from going unheard.
      response.on("error", () => undefined);
      async function* chunks(): AsyncGenerator<Buffer> {
        const source = response[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
        let received = 0;
        try {
          for (;;) {
            if (failure) throw failure;
            if (received > 0) idleTimer = setTimeout(() => fail(timeout("idle", deadlines.idleTimeoutMs)), deadlines.idleTimeoutMs);
            let next: IteratorResult<Buffer>;
            try {
              next = await source.next();
            } catch (error) {
              throw failure ?? toUpstreamError(error as Error, progress.stage);
            } finally {
              clearTimeout(idleTimer);
            }
            if (failure) throw failure;
            if (next.done) {
              end();
              observeLatency(started);
              return;
            }
            clearTimeout(firstByteTimer);
            received += next.value.length;
            if (received > maxBytes) {
              fail(new UpstreamError("too_large", `The upstream response exceeded ${maxBytes} bytes.`, progress.stage));
              throw failure;
            }
            yield next.value;
          }
        } finally {
          // The caller stopped reading before the end: the upstream must not go on generating for nobody.
          if (!over) fail(abortError(), false);
        }
      }
      const body = chunks();
      resolved = true;
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        format: bodyFormat(response.headers["content-type"]),
        body: { [Symbol.asyncIterator]: () => body },
        read: async () => {
          const cap = Math.min(maxBytes, DEFAULT_MAX_RESPONSE_BYTES);
          const parts: Buffer[] = [];
          let size = 0;
          for await (const chunk of body) {
            size += chunk.length;
            if (size > cap) {
              fail(new UpstreamError("too_large", `The upstream response exceeded ${cap} bytes.`, progress.stage));
              throw failure;
            }
            parts.push(chunk);
          }
          const rawText = Buffer.concat(parts).toString("utf8");
          return { status: response.statusCode ?? 0, json: parseUpstreamJson(rawText), rawText };
        },
        abort: (reason?: Error) => fail(reason ?? abortError(), false),
      });
    });
    watchStage(req, progress);
    req.on("error", (error) => fail(toUpstreamError(error, progress.stage)));
    signal?.addEventListener("abort", onAbort, { once: true });
    req.end(text);
  });
}

function abortError(): DOMException {
  return new DOMException("The upstream call was aborted.", "AbortError");
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
