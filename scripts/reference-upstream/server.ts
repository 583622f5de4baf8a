import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { z } from "zod";
import {
  countPromptTokens,
  countReplyTokens,
  countTextTokens,
  REPLY_PRIMING_TOKENS,
  truncateTextToTokens,
} from "../../lib/upstream/tokens";
import { REFERENCE_MODELS, type ReferenceModel } from "./catalog";
import { exampleOf } from "./json-instance";
import { parseUpstreamMode, resolveMode, type ReplyMode, type ResolvedMode, type UpstreamMode } from "./modes";
import { StreamLog, streamCompletion, type AnswerMessage, type CompletionParts, type StreamRecord } from "./stream";

export { parseUpstreamMode, type UpstreamMode } from "./modes";
export type { StreamEnd, StreamRecord } from "./stream";

/**
 * A stand-in for a supplier's OpenAI-compatible provider (Venice-shaped).
 * It is not a model: replies are deterministic text derived from the request,
 * and every response carries `X-Reference-Upstream: 1`.
 *
 * It speaks the chat-completions surface agents use: with tools it calls one (always under tool_choice
 * "required" or a named function; under "auto" unless the last message is a tool result) with arguments that
 * satisfy the tool's schema; with response_format it answers JSON (satisfying the json_schema); it reads the
 * text parts of content arrays; its usage counts tools and schemas (lib/upstream/tokens.ts, as svc does).
 * Models advertise Venice's `capabilities`; a request using a feature its model lacks is a 400.
 *
 * `stream: true` is answered as OpenAI streams (stream.ts), the same completion in chunks. Modes (modes.ts) make it
 * misbehave on purpose. Beyond the faults: "truncate" cuts every text answer to a few tokens with finish_reason
 * "length"; "break-schema" answers structured outputs and tool calls with JSON that breaks the requested schema
 * (fidelity probes' fixtures); "pad-reasoning" answers as "ok" but, to a request that asks for reasoning
 * (reasoning_effort other than "none"), claims hidden reasoning for all the room max_tokens leaves (a supplier billing
 * reasoning it did not do); "reasoning" shows its reasoning (reasoning_content, counted in the usage) unless
 * reasoning_effort is "none"; "parallel-tools" calls every tool offered at once (a named tool_choice: that one).
 */

export type ReferenceUpstreamOptions = {
  port?: number;
  host?: string;
  apiKey?: string;
  defaultMode?: UpstreamMode;
  models?: typeof REFERENCE_MODELS;
  /**
   * Awaited before each chat request is answered (once its body has arrived): a test's barrier, which holds the
   * answers until the test lets them go (tests/helpers/answer-gate.ts). Unset: answered at once.
   */
  gate?: () => Promise<void>;
  /** The wait per generated token of a stream, unless a request's `pace:<ms>` mode says otherwise. Default 1 ms. */
  tokenDelayMs?: number;
  /** How long the prompt cache (modes cache, cache-zero) keeps a prefix after it was last sent. Default 10 minutes. */
  cacheRetentionMs?: number;
};

export type ReferenceUpstream = {
  /** Base URL ending in /v1, ready for `new OpenAI({ baseURL })`. */
  url: string;
  port: number;
  apiKey: string;
  stop: () => Promise<void>;
  /** Chat completion requests received (counted on arrival, before auth or validation). */
  requestCount: () => number;
  /** Streams whose client hung up before their end (the upstream then stopped generating). */
  cancelledCount: () => number;
  /** Streams started (headers sent). */
  streamCount: () => number;
  /** The streams, oldest first (the last 10,000): how each ended and what it had sent. */
  streams: () => readonly StreamRecord[];
};

export const DEFAULT_REFERENCE_API_KEY = "ref-upstream-dev-key";
export const UPSTREAM_MODE_HEADER = "x-upstream-mode";
export const REFERENCE_OWNER = "svc-reference-upstream";
export const REPLY_PREFIX = "[reference upstream]";

const MODELS_CREATED_AT = 1_735_689_600;
const MAX_BODY_BYTES = 1024 * 1024;
const QUOTE_MAX_CHARS = 80;
const DEFAULT_TOKEN_DELAY_MS = 1;
/** What mode "truncate" leaves of a text answer, in tokens. */
export const TRUNCATED_TOKENS = 3;
/** What mode "break-schema" answers a json_schema or a tool call with: no schema a probe asks for allows it. */
export const BROKEN_SCHEMA_JSON = { __broken__: "schema" };
/** What mode "inflate" claims to have used for its one-word reply (an overbilling supplier). */
export const INFLATED_USAGE_TOKENS = 1_000_000;

const contentPartSchema = z.union([
  z.object({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.enum(["image_url", "refusal"]) }),
]);

const messageSchema = z.object({
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  content: z.union([z.string(), z.array(contentPartSchema).min(1)]).nullish(),
  name: z.string().optional(),
  tool_calls: z
    .array(
      z.object({ id: z.string(), type: z.literal("function").optional(), function: z.object({ name: z.string(), arguments: z.string() }) }),
    )
    .optional(),
  tool_call_id: z.string().optional(),
});

const maxTokensSchema = z.number().int().positive().nullish();

const toolSchema = z.object({
  type: z.literal("function"),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});

const chatRequestSchema = z.object({
  model: z.string().min(1),
  messages: z.array(messageSchema).min(1),
  max_tokens: maxTokensSchema,
  max_completion_tokens: maxTokensSchema,
  stream: z.boolean().nullish(),
  /** Read only when streaming: a request that does not stream is answered whatever it says. */
  stream_options: z.unknown().optional(),
  reasoning_effort: z.string().nullish(),
  tools: z.array(toolSchema).nullish(),
  tool_choice: z
    .union([z.enum(["none", "auto", "required"]), z.object({ type: z.literal("function"), function: z.object({ name: z.string() }) })])
    .nullish(),
  response_format: z
    .union([
      z.object({ type: z.enum(["text", "json_object"]) }),
      z.object({
        type: z.literal("json_schema"),
        json_schema: z.object({
          name: z.string(),
          description: z.string().optional(),
          schema: z.record(z.string(), z.unknown()).optional(),
          strict: z.boolean().nullish(),
        }),
      }),
    ])
    .nullish(),
});

type ChatRequest = z.infer<typeof chatRequestSchema>;

const streamOptionsSchema = z.object({ include_usage: z.boolean().nullish() }).nullish();

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function errorBody(status: number, code: string, message: string) {
  const type = status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message, type, param: null, code } };
}

function sendRaw(res: ServerResponse, status: number, contentType: string, body: string): void {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, {
    "Content-Type": contentType,
    "Content-Length": Buffer.byteLength(body),
    "X-Reference-Upstream": "1",
  });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendRaw(res, status, "application/json", JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, errorBody(status, code, message));
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

function isAuthorized(req: IncomingMessage, apiKey: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "");
  if (!match) return false;
  return timingSafeEqual(digest(match[1].trim()), digest(apiKey));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, "request_too_large", "Request body exceeds 1 MiB");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseChatRequest(raw: string, mode: ResolvedMode): ChatRequest {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new HttpError(400, "invalid_json", "We could not parse the JSON body of your request.");
  }
  const parsed = chatRequestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length ? issue.path.join(".") : "body";
    throw new HttpError(400, "invalid_request", `Invalid request at ${where}: ${issue.message}`);
  }
  if (parsed.data.stream && mode.ending?.kind === "no-stream") {
    throw new HttpError(400, "stream_not_supported", "The reference upstream does not support stream=true");
  }
  if (parsed.data.stream && !streamOptionsSchema.safeParse(parsed.data.stream_options).success) {
    throw new HttpError(400, "invalid_request", "Invalid request at stream_options: expected { include_usage?: boolean }");
  }
  return parsed.data;
}

function findModel(models: typeof REFERENCE_MODELS, id: string): ReferenceModel {
  const model = models.find((m) => m.id === id);
  if (!model) throw new HttpError(404, "model_not_found", `The model '${id}' does not exist`);
  return model;
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > QUOTE_MAX_CHARS ? `${flat.slice(0, QUOTE_MAX_CHARS)}...` : flat;
}

type ChatMessage = ChatRequest["messages"][number];

/** The text of a message: its string content, or its text parts joined (images and refusals are skipped). */
function textOf(message: ChatMessage): string {
  if (typeof message.content === "string") return message.content;
  return (message.content ?? []).map((part) => (part.type === "text" ? part.text : "")).join(" ");
}

function fingerprintOf(request: ChatRequest): string {
  return digest(JSON.stringify([request.model, request.messages, request.tools ?? null, request.response_format ?? null]))
    .toString("hex")
    .slice(0, 12);
}

function composeReply(request: ChatRequest): string {
  const last = request.messages.at(-1)!;
  const fingerprint = fingerprintOf(request);
  const said =
    last.role === "tool"
      ? `The tool returned: "${quote(textOf(last))}".`
      : `You said: "${quote(textOf([...request.messages].reverse().find((m) => m.role === "user") ?? last))}".`;
  return (
    `${REPLY_PREFIX} ${said} ` +
    `This deterministic reply (fingerprint ${fingerprint}) comes from the svc reference upstream ` +
    `standing in for ${request.model}; no language model produced it.`
  );
}

/**
 * The tools to call, if this turn calls any: always under "required" or a named choice; under "auto" unless a tool
 * just answered. One (the first, or the named one), or under mode "parallel-tools" every tool offered.
 */
function toolsToCall(request: ChatRequest, parallel: boolean) {
  const tools = request.tools ?? [];
  const choice = request.tool_choice ?? "auto";
  if (tools.length === 0 || choice === "none") return [];
  if (typeof choice === "object") {
    const named = tools.find((t) => t.function.name === choice.function.name);
    if (!named) throw new HttpError(400, "invalid_request", `tool_choice names an unknown tool '${choice.function.name}'`);
    return [named];
  }
  if (choice === "auto" && request.messages.at(-1)!.role === "tool") return [];
  return parallel ? tools : [tools[0]];
}

type Answer = { message: AnswerMessage; finish: string };

function composeAnswer(request: ChatRequest, maxTokens: number, reply: ReplyMode): Answer {
  const tools = toolsToCall(request, reply.kind === "parallel-tools");
  const broken = reply.kind === "break-schema";
  if (tools.length > 0) {
    const fingerprint = fingerprintOf(request);
    const tool_calls = tools.map((tool, i) => ({
      id: i === 0 ? `call_${fingerprint}` : `call_${fingerprint}_${i}`,
      type: "function" as const,
      function: {
        name: tool.function.name,
        arguments: JSON.stringify(broken ? BROKEN_SCHEMA_JSON : exampleOf(tool.function.parameters ?? { type: "object", properties: {} })),
      },
    }));
    return { message: { role: "assistant", content: null, tool_calls }, finish: "tool_calls" };
  }
  const text = reply.kind === "long" ? composeLongReply(request, Math.min(reply.tokens, maxTokens)) : composeReply(request);
  const cut = reply.kind === "long" && reply.tokens > maxTokens;
  const format = request.response_format;
  const full =
    format?.type === "json_schema"
      ? JSON.stringify(broken ? BROKEN_SCHEMA_JSON : exampleOf(format.json_schema.schema ?? { type: "object", properties: {} }))
      : format?.type === "json_object"
        ? JSON.stringify({ reply: text })
        : text;
  if (reply.kind === "truncate") {
    return { message: { role: "assistant", content: truncateTextToTokens(full, Math.min(maxTokens, TRUNCATED_TOKENS)) }, finish: "length" };
  }
  const content = truncateTextToTokens(full, maxTokens);
  return { message: { role: "assistant", content }, finish: content === full && !cut ? "stop" : "length" };
}

/** Mode "reasoning": the visible reasoning first, within max_tokens, then the answer in the room it leaves. */
function composeReasoningAnswer(request: ChatRequest, maxTokens: number, reply: ReplyMode): Answer {
  const reasoning = truncateTextToTokens(composeReasoning(request), maxTokens);
  const answer = composeAnswer(request, maxTokens - countTextTokens(reasoning), reply);
  const { content, tool_calls } = answer.message;
  const message: AnswerMessage = { role: "assistant", content, reasoning_content: reasoning, ...(tool_calls ? { tool_calls } : {}) };
  return { message, finish: reasoning === composeReasoning(request) ? answer.finish : "length" };
}

function composeReasoning(request: ChatRequest): string {
  const last = [...request.messages].reverse().find((m) => m.role === "user" || m.role === "tool") ?? request.messages.at(-1)!;
  return (
    `Reasoning about "${quote(textOf(last))}" (fingerprint ${fingerprintOf(request)}): ` +
    `the svc reference upstream shows this deterministic reasoning standing in for ${request.model}; no language model produced it.`
  );
}

/**
 * Mode "long": the reply, continued in numbered sentences up to `tokens` tokens. Built sentence by sentence (their
 * counts add up: each starts a pre-token), never by cutting the whole, which costs seconds per 10k tokens.
 */
function composeLongReply(request: ChatRequest, tokens: number): string {
  const reply = composeReply(request);
  let count = countTextTokens(reply);
  if (count >= tokens) return truncateTextToTokens(reply, tokens);
  const parts = [reply];
  for (let i = 1; count < tokens; i++) {
    const sentence = ` ${i}. This long reply continues deterministically, so a stream of it can outlast a socket's buffers.`;
    const sentenceTokens = countTextTokens(sentence);
    parts.push(count + sentenceTokens <= tokens ? sentence : truncateTextToTokens(sentence, tokens - count));
    count += sentenceTokens;
  }
  return parts.join("");
}

function effectiveMaxTokens(request: ChatRequest, model: ReferenceModel): number {
  const requested = [request.max_tokens, request.max_completion_tokens].filter((n): n is number => n != null);
  return Math.min(model.maxOutputTokens, ...requested);
}

/** A request using a feature the model does not have is refused, as providers do. */
function assertSupported(request: ChatRequest, model: ReferenceModel): void {
  const usesImages = request.messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type === "image_url"));
  const missing =
    (request.tools?.length ?? 0) > 0 && !model.supportsFunctionCalling
      ? "tools"
      : request.response_format?.type === "json_schema" && !model.supportsResponseSchema
        ? "response_format json_schema"
        : usesImages && !model.supportsVision
          ? "image inputs"
          : null;
  if (missing) throw new HttpError(400, "unsupported_feature", `The model '${model.id}' does not support ${missing}`);
}

/**
 * The prompt cache of modes cache and cache-zero: the prefixes this server was sent (model, tools, then the messages
 * up to each message end), each kept for the retention after it was last sent, at most MAX_CACHED_PREFIXES (the
 * oldest go first). A prefix's cached tokens are counted as svc counts a prompt (lib/upstream/tokens.ts), without the
 * reply priming only a whole prompt has.
 */
class PrefixCache {
  private readonly seen = new Map<string, number>();
  constructor(private readonly retentionMs: number) {}

  /** The cached tokens of the longest prefix of `request` seen within the retention; records every prefix it has. */
  async cachedTokens(request: ChatRequest): Promise<number> {
    const now = Date.now();
    const hash = createHash("sha256")
      .update(request.model)
      .update(JSON.stringify(request.tools ?? null));
    let longest = 0;
    const keys: string[] = [];
    request.messages.forEach((message, i) => {
      hash.update(JSON.stringify(message));
      const key = hash.copy().digest("base64url");
      keys.push(key);
      if ((this.seen.get(key) ?? 0) > now) longest = i + 1;
    });
    for (const key of keys) {
      this.seen.delete(key);
      this.seen.set(key, now + this.retentionMs);
    }
    while (this.seen.size > MAX_CACHED_PREFIXES) this.seen.delete(this.seen.keys().next().value!);
    if (longest === 0) return 0;
    const prefix = { ...request, messages: request.messages.slice(0, longest), response_format: undefined };
    return Math.max(0, (await countPromptTokens(prefix)) - REPLY_PRIMING_TOKENS);
  }
}

const MAX_CACHED_PREFIXES = 100_000;
const DEFAULT_CACHE_RETENTION_MS = 600_000;

/** The completion for this request, whichever way it is sent (completionJson, streamCompletion). */
async function composeCompletion(
  request: ChatRequest,
  model: ReferenceModel,
  reply: ReplyMode,
  cache?: { mode: ResolvedMode["cache"]; store: PrefixCache },
): Promise<CompletionParts> {
  assertSupported(request, model);
  const promptTokens = await countPromptTokens(request);
  if (promptTokens > model.contextTokens) {
    throw new HttpError(
      400,
      "context_length_exceeded",
      `This model's maximum context length is ${model.contextTokens} tokens; the messages use ${promptTokens}.`,
    );
  }
  // A substituting upstream answers as the other model would: its reply, composed for that model, under its name.
  const answered = reply.kind === "substitute" ? { ...request, model: reply.model } : request;
  const maxTokens = effectiveMaxTokens(request, model);
  const answer: Answer =
    reply.kind === "inflate"
      ? { message: { role: "assistant", content: "Yes." }, finish: "stop" }
      : reply.kind === "reasoning" && request.reasoning_effort !== "none"
        ? composeReasoningAnswer(answered, maxTokens, reply)
        : composeAnswer(answered, maxTokens, reply);
  const completionTokens = await countReplyTokens(answer.message);
  const base = {
    id: `chatcmpl-${randomBytes(12).toString("hex")}`,
    object: "chat.completion" as const,
    created: Math.floor(Date.now() / 1000),
    model: answered.model,
    system_fingerprint: "fp_reference",
  };
  const usage =
    reply.kind === "inflate"
      ? { prompt_tokens: INFLATED_USAGE_TOKENS, completion_tokens: INFLATED_USAGE_TOKENS, total_tokens: 2 * INFLATED_USAGE_TOKENS }
      : reply.kind === "pad-reasoning" && asksForReasoning(request)
        ? paddedReasoningUsage(promptTokens, completionTokens, maxTokens)
        : answer.message.reasoning_content !== undefined
          ? {
              prompt_tokens: promptTokens,
              completion_tokens: completionTokens,
              total_tokens: promptTokens + completionTokens,
              completion_tokens_details: { reasoning_tokens: countTextTokens(answer.message.reasoning_content) },
            }
          : { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  if (cache && cache.mode !== null) {
    // Recorded whichever mode: cache-zero has the prefix cached as well, it only does not say so.
    const cachedTokens = await cache.store.cachedTokens(request);
    const reported = cache.mode === "cache" ? Math.min(cachedTokens, usage.prompt_tokens) : 0;
    return {
      base,
      message: answer.message,
      finish: answer.finish,
      usage: { ...usage, prompt_tokens_details: { cached_tokens: reported } },
    };
  }
  return { base, message: answer.message, finish: answer.finish, usage };
}

/** The JSON answer (a request that does not stream, or mode json-stream). */
function completionJson({ base, message, finish, usage }: CompletionParts, reply: ReplyMode) {
  const choices = [{ index: 0, message, logprobs: null, finish_reason: finish }];
  if (reply.kind === "no-usage") return { ...base, choices };
  if (reply.kind === "bad-shape") return { ...base, usage };
  return { ...base, choices, usage };
}

function asksForReasoning(request: ChatRequest): boolean {
  return request.reasoning_effort != null && request.reasoning_effort !== "none";
}

/** Mode "pad-reasoning": the visible answer as counted, and hidden reasoning claimed for the rest of max_tokens. */
function paddedReasoningUsage(promptTokens: number, visibleTokens: number, maxTokens: number) {
  const completion = Math.max(maxTokens, visibleTokens);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
    completion_tokens_details: { reasoning_tokens: completion - visibleTokens },
  };
}

function toModelEntry(model: ReferenceModel) {
  return {
    id: model.id,
    object: "model",
    created: MODELS_CREATED_AT,
    owned_by: REFERENCE_OWNER,
    type: "text",
    model_spec: {
      name: model.name,
      availableContextTokens: model.contextTokens,
      maxCompletionTokens: model.maxOutputTokens,
      pricing: {
        input: { usd: Number(model.inputUsdPerMTok), diem: Number(model.inputUsdPerMTok) },
        output: { usd: Number(model.outputUsdPerMTok), diem: Number(model.outputUsdPerMTok) },
      },
      capabilities: {
        supportsFunctionCalling: model.supportsFunctionCalling,
        supportsResponseSchema: model.supportsResponseSchema,
        supportsVision: model.supportsVision,
      },
    },
  };
}

function requestMode(req: IncomingMessage, fallback: ResolvedMode): ResolvedMode {
  const header = req.headers[UPSTREAM_MODE_HEADER];
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined) return fallback;
  const mode = parseUpstreamMode(raw);
  if (!mode) throw new HttpError(400, "invalid_upstream_mode", `Unknown X-Upstream-Mode '${raw}'`);
  return resolveMode(mode);
}

export async function startReferenceUpstream(opts: ReferenceUpstreamOptions = {}): Promise<ReferenceUpstream> {
  const host = opts.host ?? "127.0.0.1";
  const apiKey = opts.apiKey ?? DEFAULT_REFERENCE_API_KEY;
  const models = opts.models ?? REFERENCE_MODELS;
  const defaultMode = parseUpstreamMode(opts.defaultMode ?? "ok");
  if (!defaultMode) throw new Error(`Invalid defaultMode '${opts.defaultMode}'`);
  const fallbackMode = resolveMode(defaultMode);
  const tokenDelayMs = opts.tokenDelayMs ?? DEFAULT_TOKEN_DELAY_MS;
  if (!Number.isFinite(tokenDelayMs) || tokenDelayMs < 0) throw new Error(`Invalid tokenDelayMs '${opts.tokenDelayMs}'`);

  const streamLog = new StreamLog();
  const prefixCache = new PrefixCache(opts.cacheRetentionMs ?? DEFAULT_CACHE_RETENTION_MS);
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let chatRequests = 0;
  let flakyRequests = 0;

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });
  }

  async function handleChat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const mode = requestMode(req, fallbackMode);
    const raw = await readBody(req);
    const { fault } = mode;
    if (fault?.kind === "timeout") return;
    if (opts.gate) await opts.gate();
    if (mode.latencyMs > 0) await sleep(mode.latencyMs);
    if (fault?.kind === "error") {
      return sendError(res, fault.status, "injected_error", `Reference upstream injected HTTP ${fault.status}`);
    }
    if (fault?.kind === "flaky" && ++flakyRequests % fault.every === 0) {
      return sendError(res, 500, "injected_error", `Reference upstream failed request ${flakyRequests} (flaky:${fault.every})`);
    }
    if (fault?.kind === "garbage") {
      return sendRaw(res, 200, "application/json", "<html>upstream garbage: this is not JSON {");
    }
    const request = parseChatRequest(raw, mode);
    const model = findModel(models, request.model);
    const completion = await composeCompletion(request, model, mode.reply, { mode: mode.cache, store: prefixCache });
    if (!request.stream || mode.ending?.kind === "json-stream") return sendJson(res, 200, completionJson(completion, mode.reply));
    if (res.destroyed) return;
    await streamCompletion(
      res,
      completion,
      {
        includeUsage: streamOptionsSchema.parse(request.stream_options)?.include_usage === true,
        reportsUsage: mode.reply.kind !== "no-usage",
        withChoices: mode.reply.kind !== "bad-shape",
        tokenDelayMs: mode.paceMs ?? tokenDelayMs,
        firstTokenMs: mode.firstTokenMs,
        ending: mode.ending,
        comments: mode.comments,
      },
      streamLog,
    );
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://reference.invalid").pathname.replace(/\/+$/, "");
    if (req.method === "GET" && path === "/health") return sendJson(res, 200, { ok: true });
    const isChat = req.method === "POST" && path === "/v1/chat/completions";
    if (isChat) chatRequests++;
    if (path === "/v1" || path.startsWith("/v1/")) {
      if (!isAuthorized(req, apiKey)) {
        return sendError(res, 401, "invalid_api_key", "Incorrect API key provided.");
      }
      if (isChat) return handleChat(req, res);
      if (req.method === "GET" && path === "/v1/models") {
        return sendJson(res, 200, { object: "list", data: models.map(toModelEntry) });
      }
    }
    sendError(res, 404, "not_found", `No route for ${req.method} ${path || "/"}`);
  }

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (err instanceof HttpError) return sendError(res, err.status, err.code, err.message);
      sendError(res, 500, "internal_error", err instanceof Error ? err.message : String(err));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });

  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  let stopping: Promise<void> | undefined;

  function stop(): Promise<void> {
    stopping ??= new Promise<void>((resolve) => {
      streamLog.stopping = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
    return stopping;
  }

  return {
    url: `http://${urlHost}:${port}/v1`,
    port,
    apiKey,
    stop,
    requestCount: () => chatRequests,
    cancelledCount: () => streamLog.cancelled,
    streamCount: () => streamLog.started,
    streams: () => streamLog.records,
  };
}
