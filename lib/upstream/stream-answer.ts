import "server-only";
import {
  defaultFinishReason,
  isJsonObject,
  parseClaimedUsage,
  parseContent,
  readFingerprint,
  readFinishReason,
  toolCallArguments,
  toolCallId,
  upstreamErrorCode,
  upstreamErrorMessage,
  visibleReasoning,
  withTextWhenEmpty,
  type AssistantMessageOut,
  type ClaimedUsage,
  type FinishReason,
  type ToolCallOut,
  type UpstreamAnswer,
} from "@/lib/upstream/answer";
import { DEFAULT_MAX_RESPONSE_BYTES, parseUpstreamJson } from "@/lib/upstream/client";
import { SseLimitError, SseParser, type SseEvent } from "@/lib/upstream/sse";

/**
 * Reading a supplier's streamed chat completion as it arrives: each `chat.completion.chunk` read into a typed delta for
 * the buyer, and the deltas accumulated into the same UpstreamAnswer the non-streaming parser (answer.ts) returns for
 * the same answer, so billing (metering.ts billUsage) and the probes' judge read a streamed answer exactly as a JSON
 * one. The rules are answer.ts's, shared rather than copied: finish reasons and their aliases, failed generations,
 * the usage claim, reasoning fields, tool-call shape.
 *
 * What a stream says, chunk by chunk:
 * - the first choice (index 0; svc asks for one) carries a delta: content, refusal, visible reasoning (reasoning_content,
 *   else reasoning, else Mistral's thinking parts), tool-call fragments by index (id, name and the first arguments
 *   once, then argument fragments; a whole call in one delta as Ollama sends it; an index-less call is a new call when
 *   it brings an id, else the last call's continuation), logprobs, and once a finish_reason;
 * - usage wherever it comes, the last one standing (cumulative): a last chunk with empty choices (OpenAI, vLLM,
 *   llama.cpp, Ollama, OpenRouter), the chunk with the finish reason (DeepSeek, Mistral, Groq), `x_groq.usage`, or
 *   every chunk (vLLM's continuous usage stats);
 * - `data: [DONE]` ends it. A chunk with empty choices and nothing else (Azure's prompt filter results) says nothing.
 *
 * How a stream fails (each a StreamFailure, after which nothing more is read): an error object as the data
 * (`{"error": …}`: OpenAI, vLLM, Xinference; the flat `{"object":"error"}` of older vLLM and SGLang), an `error`
 * event or llama.cpp's `error:` field, a failed finish reason (OpenRouter's and Mistral's "error", vLLM's "abort",
 * DeepSeek's "insufficient_system_resource"), data that is not a chunk, an answer over the limits, or a stream that
 * ends before it finished: neither a finish reason nor [DONE] (a finish reason without [DONE] is a complete answer:
 * some llama.cpp forks never send it). An error before [DONE] fails the stream even though [DONE] follows (vLLM and
 * llama.cpp send one after their error).
 *
 * Bounded like the non-streaming answer it becomes: the answer's text (content, refusal, reasoning, tool-call ids,
 * names and arguments, JSON-serialised logprobs, TOOL_CALL_BYTES per call) at most `maxAnswerBytes`, the
 * DEFAULT_MAX_RESPONSE_BYTES a JSON answer may hold; so at most that many bytes of arguments, and at most
 * maxAnswerBytes / TOOL_CALL_BYTES tool calls. One SSE line or event at most as large as that too (sse.ts), each
 * chunk's JSON no deeper than a JSON answer may be. The stream's total bytes are the client's to bound.
 */

export type ToolCallDelta = { index: number; id: string | null; name: string | null; arguments: string | null };

/** What one chunk adds to the answer (null fields: nothing of that kind in this chunk). */
export type ChatDelta = {
  content: string | null;
  /** Absent when the chunk does not mention it; null when it says there is none (OpenAI's first delta). */
  refusal?: string | null;
  reasoning: string | null;
  toolCalls: ToolCallDelta[];
  finishReason: FinishReason | null;
  logprobs: Record<string, unknown> | null;
};

export type StreamFailureKind =
  /** The upstream reported an error in the stream (an error object or event, or a failed finish reason). */
  | "error"
  /** Data that is not a chat completion chunk (not JSON, or not its shape), or a stream that carried no answer. */
  | "unusable"
  /** More than a JSON answer may hold, or an SSE line or event over its limit. */
  | "too_large"
  /** The stream ended before the answer finished (no finish reason and no [DONE]). */
  | "truncated";

export type StreamFailure = {
  kind: StreamFailureKind;
  /** Safe to show the buyer and to log: what went wrong, with the upstream's own message when it gave one. */
  message: string;
  upstreamMessage: string | null;
  upstreamCode: string | null;
};

export type StreamEvent =
  { type: "chunk"; delta: ChatDelta | null; usage: ClaimedUsage | null } | { type: "done" } | { type: "failed"; failure: StreamFailure };

export type StreamOutcome =
  { ok: true; answer: UpstreamAnswer; sawDone: boolean } | { ok: false; failure: StreamFailure; partial: UpstreamAnswer };

export type ChatStreamLimits = { maxAnswerBytes: number; maxLineBytes: number; maxEventBytes: number };

/** What one tool call adds to an answer's size beyond its id, name and arguments: its JSON envelope. */
export const TOOL_CALL_BYTES = 64;

export const DEFAULT_CHAT_STREAM_LIMITS: ChatStreamLimits = {
  maxAnswerBytes: DEFAULT_MAX_RESPONSE_BYTES,
  maxLineBytes: DEFAULT_MAX_RESPONSE_BYTES,
  maxEventBytes: DEFAULT_MAX_RESPONSE_BYTES,
};

type Json = Record<string, unknown>;
type ToolCallState = { id: string | null; name: string | null; arguments: string[] | null };

/**
 * One upstream stream: push its bytes as they arrive (each push returns the events they completed), `end()` when the
 * body ended, `partial()` at any time for what arrived so far (the answer a cancelled or broken stream is billed on,
 * by svc's own count: its usage, if any, is the upstream's claim so far).
 */
export class ChatStream {
  private readonly limits: ChatStreamLimits;
  private readonly sse: SseParser;
  private state: "open" | "done" | "failed" = "open";
  private failure: StreamFailure | null = null;
  private answerBytes = 0;
  private sawChoice = false;
  private content: string[] | null = null;
  private refusal: string[] | null | undefined;
  private reasoning: string[] = [];
  private readonly toolCalls = new Map<number, ToolCallState>();
  /** Index-less tool calls are placed by their id (see the top of this file). */
  private readonly toolIndexById = new Map<string, number>();
  private lastToolIndex: number | null = null;
  private maxToolIndex = -1;
  private finishReason: FinishReason | null = null;
  private logprobs: Record<string, unknown> | null = null;
  private fingerprint: string | null = null;
  private usage: ClaimedUsage | null = null;

  constructor(limits: Partial<ChatStreamLimits> = {}) {
    this.limits = { ...DEFAULT_CHAT_STREAM_LIMITS, ...limits };
    this.sse = new SseParser({ maxLineBytes: this.limits.maxLineBytes, maxEventBytes: this.limits.maxEventBytes, extraFields: ["error"] });
  }

  get status(): "open" | "done" | "failed" {
    return this.state;
  }

  /** The next bytes of the body; nothing more is read once the stream is done or failed. */
  push(bytes: Uint8Array): StreamEvent[] {
    if (this.state !== "open") return [];
    try {
      return this.readAll(this.sse.push(bytes));
    } catch (error) {
      if (!(error instanceof SseLimitError)) throw error;
      return [this.fail("too_large", error.message)];
    }
  }

  /** The body ended (the connection closed cleanly): the answer, or why there is none. */
  end(): StreamOutcome {
    if (this.state === "open") {
      try {
        this.readAll(this.sse.end());
      } catch (error) {
        if (!(error instanceof SseLimitError)) throw error;
        this.fail("too_large", error.message);
      }
    }
    if (this.state === "open" && this.finishReason === null) {
      this.fail("truncated", "The upstream's stream ended before its answer finished (no finish reason, no [DONE]).");
    }
    if (this.state !== "failed" && !this.sawChoice) this.fail("unusable", "The upstream's stream carried no answer.");
    if (this.state !== "failed" && [...this.toolCalls.values()].some((call) => call.name === null)) {
      this.fail("unusable", "The upstream streamed a tool call without a name.");
    }
    if (this.failure) return { ok: false, failure: this.failure, partial: this.partial() };
    return { ok: true, answer: this.partial(), sawDone: this.state === "done" };
  }

  /** What arrived so far, as an answer (a tool call whose name has not arrived is named ""). */
  partial(): UpstreamAnswer {
    const message: AssistantMessageOut = { role: "assistant", content: this.content === null ? null : this.content.join("") };
    if (this.refusal !== undefined) message.refusal = this.refusal === null ? null : this.refusal.join("");
    const reasoning = this.reasoning.join("");
    if (reasoning !== "") message.reasoning_content = reasoning;
    const calls: ToolCallOut[] = [...this.toolCalls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call], i) => ({
        id: toolCallId(call.id, i),
        type: "function",
        function: { name: call.name ?? "", arguments: call.arguments === null ? "{}" : call.arguments.join("") },
      }));
    if (calls.length > 0) message.tool_calls = calls;
    withTextWhenEmpty(message);
    return {
      message,
      finishReason: this.finishReason ?? defaultFinishReason(message),
      logprobs: this.logprobs,
      systemFingerprint: this.fingerprint,
      usage: this.usage,
    };
  }

  private readAll(items: ReturnType<SseParser["push"]>): StreamEvent[] {
    const out: StreamEvent[] = [];
    for (const item of items) {
      if (item.type !== "event") continue;
      const event = this.read(item);
      if (event) out.push(event);
      if (this.state !== "open") break;
    }
    return out;
  }

  private read(event: SseEvent): StreamEvent | null {
    const extraError = event.extra?.error;
    if (extraError !== undefined) return this.failWith(errorBody(extraError));
    if (event.event === "error") return this.failWith(errorBody(event.data));
    if (event.data.trim() === "[DONE]") {
      this.state = "done";
      return { type: "done" };
    }
    if (event.event !== "message") return null;
    const json = parseUpstreamJson(event.data);
    if (!isJsonObject(json)) return this.fail("unusable", "The upstream streamed data that is not a chat completion chunk.");
    if (json.error !== undefined && json.error !== null) return this.failWith(json);
    if (json.object === "error") return this.failWith(json);
    return this.readChunk(json);
  }

  private readChunk(json: Json): StreamEvent {
    const usage = parseClaimedUsage(json.usage) ?? (isJsonObject(json.x_groq) ? parseClaimedUsage(json.x_groq.usage) : null);
    if (usage) this.usage = usage;
    const fingerprint = readFingerprint(json.system_fingerprint);
    if (fingerprint !== null) this.fingerprint = fingerprint;
    if (json.choices === undefined || json.choices === null) return { type: "chunk", delta: null, usage };
    if (!Array.isArray(json.choices)) return this.fail("unusable", "The upstream streamed a chunk whose choices are not a list.");
    const choice = (json.choices as unknown[]).find((c) => isJsonObject(c) && (c.index === undefined || c.index === 0));
    if (choice === undefined) return { type: "chunk", delta: null, usage };
    if (readFinishReason((choice as Json).finish_reason) === "failed") return this.failWith(null);
    const delta = this.readChoice(choice as Json);
    return delta === null
      ? this.fail("unusable", "The upstream streamed a chunk that is not a chat completion delta.")
      : this.accept(delta, usage);
  }

  /**
   * A choice's delta, or null when it is not one. A choice without a delta but with a whole message (a proxy that
   * sends the answer as one chunk) reads as a delta of all of it.
   */
  private readChoice(choice: Json): ChatDelta | null {
    const raw = choice.delta ?? choice.message ?? {};
    if (!isJsonObject(raw)) return null;
    const reason = readFinishReason(choice.finish_reason);
    if (reason === "failed") return null;
    const content = parseContent(raw.content);
    if (!content) return null;
    const delta: ChatDelta = {
      content: content.text,
      reasoning: visibleReasoning(raw, content.thinking) || null,
      toolCalls: [],
      finishReason: reason,
      logprobs: isJsonObject(choice.logprobs) ? choice.logprobs : null,
    };
    if (typeof raw.refusal === "string" || raw.refusal === null) delta.refusal = raw.refusal;
    if (raw.tool_calls !== undefined && raw.tool_calls !== null) {
      if (!Array.isArray(raw.tool_calls)) return null;
      for (const call of raw.tool_calls as unknown[]) {
        const parsed = this.readToolCall(call);
        if (!parsed) return null;
        delta.toolCalls.push(parsed);
      }
    }
    return delta;
  }

  private readToolCall(call: unknown): ToolCallDelta | null {
    if (!isJsonObject(call)) return null;
    const fn = call.function ?? {};
    if (!isJsonObject(fn)) return null;
    const id = typeof call.id === "string" && call.id !== "" ? call.id : null;
    const name = typeof fn.name === "string" ? fn.name : null;
    if (fn.name !== undefined && fn.name !== null && name === null) return null;
    const args = fn.arguments === undefined || fn.arguments === null ? null : toolCallArguments(fn.arguments);
    if (fn.arguments !== undefined && fn.arguments !== null && args === null) return null;
    let index: number;
    if (call.index === undefined || call.index === null) {
      const known = id === null ? undefined : this.toolIndexById.get(id);
      index = known ?? (id !== null || this.lastToolIndex === null ? this.maxToolIndex + 1 : this.lastToolIndex);
    } else if (Number.isSafeInteger(call.index) && (call.index as number) >= 0) {
      index = call.index as number;
    } else return null;
    return { index, id, name, arguments: args };
  }

  private accept(delta: ChatDelta, usage: ClaimedUsage | null): StreamEvent {
    this.sawChoice = true;
    let bytes = 0;
    const text = (fragment: string | null | undefined) => {
      if (typeof fragment === "string") bytes += Buffer.byteLength(fragment);
    };
    text(delta.content);
    text(delta.refusal);
    text(delta.reasoning);
    for (const call of delta.toolCalls) {
      if (!this.toolCalls.has(call.index)) bytes += TOOL_CALL_BYTES;
      text(call.id);
      text(call.name);
      text(call.arguments);
    }
    if (delta.logprobs) bytes += Buffer.byteLength(JSON.stringify(delta.logprobs));
    this.answerBytes += bytes;
    if (this.answerBytes > this.limits.maxAnswerBytes) {
      return this.fail("too_large", `The upstream's streamed answer exceeded ${this.limits.maxAnswerBytes} bytes.`);
    }

    if (delta.content !== null) (this.content ??= []).push(delta.content);
    if (delta.refusal === null) this.refusal ??= null;
    else if (typeof delta.refusal === "string") (this.refusal ??= []).push(delta.refusal);
    if (delta.reasoning !== null) this.reasoning.push(delta.reasoning);
    for (const call of delta.toolCalls) {
      let state = this.toolCalls.get(call.index);
      if (!state) this.toolCalls.set(call.index, (state = { id: null, name: null, arguments: null }));
      if (state.id === null && call.id !== null) {
        state.id = call.id;
        this.toolIndexById.set(call.id, call.index);
      }
      state.name ??= call.name;
      if (call.arguments !== null) (state.arguments ??= []).push(call.arguments);
      this.lastToolIndex = call.index;
      this.maxToolIndex = Math.max(this.maxToolIndex, call.index);
    }
    if (delta.finishReason !== null) this.finishReason = delta.finishReason;
    if (delta.logprobs) this.logprobs = appendLogprobs(this.logprobs, delta.logprobs);
    return { type: "chunk", delta, usage };
  }

  /** The stream failed as the upstream said (an error object, or a failed finish reason when `json` is null). */
  private failWith(json: unknown): StreamEvent {
    const upstreamMessage = upstreamErrorMessage(json);
    const event = this.fail(
      "error",
      upstreamMessage ? `The upstream's stream failed: ${upstreamMessage}` : "The upstream's stream failed.",
    );
    this.failure!.upstreamMessage = upstreamMessage;
    this.failure!.upstreamCode = upstreamErrorCode(json);
    return event;
  }

  private fail(kind: StreamFailureKind, message: string): StreamEvent {
    this.state = "failed";
    this.failure = { kind, message, upstreamMessage: null, upstreamCode: null };
    return { type: "failed", failure: this.failure };
  }
}

/**
 * What an `error` event or field holds, in the shape upstreamErrorMessage reads: an error body as is, an error object
 * (llama.cpp's `{code, message, type}`) or any other text as its `error`.
 */
function errorBody(text: string): unknown {
  const json = parseUpstreamJson(text);
  if (isJsonObject(json) && (json.error !== undefined || json.object === "error")) return json;
  return { error: json ?? text };
}

/**
 * Logprobs across chunks: each list (content, refusal) joined in order; anything else as last sent. Keys are the
 * supplier's: they are defined as own properties, as JSON.parse does (an assigned "__proto__" would set the prototype).
 */
function appendLogprobs(into: Record<string, unknown> | null, more: Record<string, unknown>): Record<string, unknown> {
  const out = into ?? {};
  const own = (key: string) => (Object.prototype.hasOwnProperty.call(out, key) ? out[key] : undefined);
  const define = (key: string, value: unknown) =>
    Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
  for (const [key, value] of Object.entries(more)) {
    const had = own(key);
    if (Array.isArray(value)) {
      const list: unknown[] = Array.isArray(had) ? had : [];
      for (const entry of value as unknown[]) list.push(entry);
      define(key, list);
    } else if (value !== null || had === undefined) define(key, value);
  }
  return out;
}
