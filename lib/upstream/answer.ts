/**
 * Reading a supplier's answer: what of it reaches the buyer (OpenAI's shape, our own id and model), and what
 * it claims to have used. Anything that is not a chat completion, or one whose generation the upstream says failed,
 * is the supplier's fault (an unusable answer).
 */
import "server-only";

export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter";

export type ToolCallOut = { id: string; type: "function"; function: { name: string; arguments: string } };

export type AssistantMessageOut = {
  role: "assistant";
  content: string | null;
  refusal?: string | null;
  tool_calls?: ToolCallOut[];
  reasoning_content?: string;
};

/** The usage an upstream reports (its own tokenizer's count), not yet checked against ours. */
export type ClaimedUsage = { promptTokens: number; completionTokens: number; cachedTokens: number | null; reasoningTokens: number | null };

export type UpstreamAnswer = {
  message: AssistantMessageOut;
  finishReason: FinishReason;
  logprobs: Record<string, unknown> | null;
  systemFingerprint: string | null;
  usage: ClaimedUsage | null;
};

const FINISH_REASONS = new Set<string>(["stop", "length", "tool_calls", "content_filter"]);
/** Other servers' names for one of OpenAI's reasons: Mistral's answer cut at the model's context window. */
const FINISH_REASON_ALIASES = new Map<string, FinishReason>([["model_length", "length"]]);
/**
 * Reasons saying the generation failed (OpenRouter's and Mistral's "error", vLLM's "abort", DeepSeek's
 * "insufficient_system_resource"): whatever text came with one is not an answer.
 */
const FAILED_FINISH_REASONS = new Set<string>(["error", "abort", "insufficient_system_resource"]);
const MAX_FINGERPRINT_CHARS = 256;

type Json = Record<string, unknown>;
export const isJsonObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const count = (value: unknown): number | null => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : null);

/** The first choice of an OpenAI chat completion, or null when the answer is not one. */
export function parseUpstreamAnswer(json: unknown): UpstreamAnswer | null {
  if (!isJsonObject(json) || !Array.isArray(json.choices) || json.choices.length === 0) return null;
  const choice = json.choices[0] as unknown;
  if (!isJsonObject(choice) || !isJsonObject(choice.message)) return null;
  const reason = readFinishReason(choice.finish_reason);
  if (reason === "failed") return null;
  const message = parseMessage(choice.message);
  if (!message) return null;
  return {
    message,
    finishReason: reason ?? defaultFinishReason(message),
    logprobs: isJsonObject(choice.logprobs) ? choice.logprobs : null,
    systemFingerprint: readFingerprint(json.system_fingerprint),
    usage: parseClaimedUsage(json.usage),
  };
}

/**
 * What a choice's finish_reason says (a message's or a streamed chunk's): one of OpenAI's reasons (aliases read as
 * theirs), "failed" for a generation the upstream says failed, or null when it names none or one we do not know.
 */
export function readFinishReason(raw: unknown): FinishReason | "failed" | null {
  if (typeof raw !== "string") return null;
  if (FAILED_FINISH_REASONS.has(raw)) return "failed";
  return FINISH_REASONS.has(raw) ? (raw as FinishReason) : (FINISH_REASON_ALIASES.get(raw) ?? null);
}

/** The reason of an answer whose upstream named none (or one we do not know). */
export function defaultFinishReason(message: AssistantMessageOut): FinishReason {
  return message.tool_calls ? "tool_calls" : "stop";
}

export function readFingerprint(raw: unknown): string | null {
  return typeof raw === "string" ? raw.slice(0, MAX_FINGERPRINT_CHARS) : null;
}

function parseMessage(raw: Json): AssistantMessageOut | null {
  const content = parseContent(raw.content);
  if (!content) return null;
  const message: AssistantMessageOut = { role: "assistant", content: content.text };
  if (typeof raw.refusal === "string" || raw.refusal === null) message.refusal = raw.refusal;
  const reasoning = visibleReasoning(raw, content.thinking);
  if (reasoning !== null && reasoning !== "") message.reasoning_content = reasoning;
  if (raw.tool_calls !== undefined && raw.tool_calls !== null) {
    if (!Array.isArray(raw.tool_calls)) return null;
    const calls: ToolCallOut[] = [];
    for (const [i, call] of raw.tool_calls.entries()) {
      const parsed = parseToolCall(call, i);
      if (!parsed) return null;
      calls.push(parsed);
    }
    if (calls.length > 0) message.tool_calls = calls;
  }
  return withTextWhenEmpty(message);
}

/** A reply with nothing at all in it reads as empty text, as OpenAI's clients expect a string then. */
export function withTextWhenEmpty(message: AssistantMessageOut): AssistantMessageOut {
  if (message.content === null && !message.tool_calls && typeof message.refusal !== "string") message.content = "";
  return message;
}

/**
 * The visible reasoning of a message or a streamed delta: reasoning_content (DeepSeek, llama.cpp, older vLLM), else
 * reasoning (OpenRouter, Ollama, Groq, newer vLLM), else the thinking parts of its content (Mistral); only one of them,
 * as servers that send two send the same text twice. Null when none is a string.
 */
export function visibleReasoning(raw: Json, thinking: string): string | null {
  const reasoning = raw.reasoning_content ?? raw.reasoning ?? thinking;
  return typeof reasoning === "string" ? reasoning : null;
}

/**
 * A message's content: a string or nothing, or (Mistral's reasoning models) a list of typed parts, the text parts
 * making the reply and the thinking parts (each a list of text parts) its reasoning. Anything else is not an answer.
 */
export function parseContent(raw: unknown): { text: string | null; thinking: string } | null {
  if (raw === undefined || raw === null) return { text: null, thinking: "" };
  if (typeof raw === "string") return { text: raw, thinking: "" };
  if (!Array.isArray(raw)) return null;
  let text = "";
  let thinking = "";
  for (const part of raw as unknown[]) {
    if (!isJsonObject(part)) return null;
    if (part.type === "text" && typeof part.text === "string") text += part.text;
    else if (part.type === "thinking" && Array.isArray(part.thinking)) {
      const thought = joinTextParts(part.thinking);
      if (thought === null) return null;
      thinking += thought;
    } else return null;
  }
  return { text, thinking };
}

function joinTextParts(parts: unknown[]): string | null {
  let text = "";
  for (const part of parts) {
    if (!isJsonObject(part) || part.type !== "text" || typeof part.text !== "string") return null;
    text += part.text;
  }
  return text;
}

function parseToolCall(call: unknown, index: number): ToolCallOut | null {
  if (!isJsonObject(call) || !isJsonObject(call.function) || typeof call.function.name !== "string") return null;
  const text = call.function.arguments === undefined ? "{}" : toolCallArguments(call.function.arguments);
  if (text === null) return null;
  return { id: toolCallId(call.id, index), type: "function", function: { name: call.function.name, arguments: text } };
}

/**
 * A tool call's arguments (or a streamed fragment of them) as OpenAI's JSON string: some upstreams send an object.
 * Null when they are neither.
 */
export function toolCallArguments(args: unknown): string | null {
  return typeof args === "string" ? args : isJsonObject(args) ? JSON.stringify(args) : null;
}

/** A tool call's id, or one made from its position when the upstream gave none. */
export function toolCallId(id: unknown, index: number): string {
  return typeof id === "string" && id !== "" ? id : `call_${index}`;
}

/**
 * The usage an upstream claims, from OpenAI's usage object (a completion's, a streamed chunk's, Groq's x_groq.usage);
 * null when it is not one.
 */
export function parseClaimedUsage(raw: unknown): ClaimedUsage | null {
  if (!isJsonObject(raw)) return null;
  const promptTokens = count(raw.prompt_tokens);
  const completionTokens = count(raw.completion_tokens);
  if (promptTokens === null || completionTokens === null) return null;
  // DeepSeek's first cache-aware answers gave the hits only as prompt_cache_hit_tokens.
  const cached =
    (isJsonObject(raw.prompt_tokens_details) ? count(raw.prompt_tokens_details.cached_tokens) : null) ?? count(raw.prompt_cache_hit_tokens);
  const reasoning = isJsonObject(raw.completion_tokens_details) ? count(raw.completion_tokens_details.reasoning_tokens) : null;
  return { promptTokens, completionTokens, cachedTokens: cached, reasoningTokens: reasoning };
}

/**
 * A short, single-line excerpt of an upstream's error message, safe to show the buyer. Read from OpenAI's
 * `{"error":{"message"}}`, a bare `{"error":"..."}` (Venice, vLLM's key check), or the flat
 * `{"object":"error","message"}` of older vLLM releases, SGLang and Mistral.
 */
export function upstreamErrorMessage(json: unknown): string | null {
  if (!isJsonObject(json)) return null;
  const { error } = json;
  const message = isJsonObject(error)
    ? error.message
    : typeof error === "string"
      ? error
      : json.object === "error"
        ? json.message
        : undefined;
  if (typeof message !== "string") return null;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what it removes
  const flat = message.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return flat === "" ? null : flat.slice(0, 300);
}

export function upstreamErrorCode(json: unknown): string | null {
  const error = isJsonObject(json) ? json.error : undefined;
  return isJsonObject(error) && typeof error.code === "string" ? error.code : null;
}
