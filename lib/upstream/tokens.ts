import { countTokens, decode, encode } from "gpt-tokenizer/encoding/o200k_base";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";

/**
 * Token accounting shared by the marketplace router and the reference upstream.
 *
 * Encoding: o200k_base (gpt-tokenizer). Third-party models use their own tokenizers, so this is an estimate
 * for them (the router allows a stated tolerance, lib/upstream/metering.ts), but it is the exact count the
 * reference upstream reports, which keeps metering testable end to end.
 *
 * Cost is linear in the text: byte-pair merging is quadratic in the length of one pre-token (a run of one
 * character class: 100k U+FFFD took a minute), so pre-tokens longer than MAX_PIECE_CHARS are cut into pieces
 * of that length. The count of a cut run can differ from the uncut one by a token per piece; everyone who
 * counts here counts the same way. The async variants work in slices of a few milliseconds and yield to the
 * event loop between them, so a megabyte of text never stalls other requests.
 *
 * Prompt formula (OpenAI cookbook chat format, extended to tools and schemas):
 *   prompt_tokens = Σ_messages (PER_MESSAGE_OVERHEAD + tokens(role, name, text parts, tool calls))
 *                 + Σ_images IMAGE_TOKENS + Σ_tools (PER_TOOL_OVERHEAD + tokens(JSON of the function))
 *                 + (SCHEMA_OVERHEAD + tokens(JSON of the response schema)) + REPLY_PRIMING
 * A completion is tokens(content, refusal, reasoning, tool-call names and arguments) + PER_TOOL_CALL_OVERHEAD each.
 */
export const PER_MESSAGE_OVERHEAD_TOKENS = 3;
export const REPLY_PRIMING_TOKENS = 3;
export const PER_TOOL_OVERHEAD_TOKENS = 8;
export const PER_TOOL_CALL_OVERHEAD_TOKENS = 3;
export const SCHEMA_OVERHEAD_TOKENS = 8;
/** What one image may cost: reserved and billable per image, whatever the upstream claims beyond it. */
export const IMAGE_TOKENS = 4096;
/** o200k_base's longest token is 128 bytes (a run of spaces): no text has fewer tokens than bytes / 128. */
export const MAX_TOKEN_BYTES = 128;
/** Pre-tokens are merged at most this many characters at a time (the quadratic part stays this small). */
export const MAX_PIECE_CHARS = 16;
const SEGMENT_CHARS = 4096;
const SLICE_MS = 4;

// User text that happens to contain "<|endoftext|>" must be counted as plain text, not rejected.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** Parts of the text to hand to the tokenizer, each either ordinary text or at most MAX_PIECE_CHARS of one long pre-token. */
function* segments(text: string): Generator<string> {
  if (text.length <= MAX_PIECE_CHARS) {
    yield text;
    return;
  }
  let start = 0;
  for (const match of text.matchAll(new RegExp(O200K_TOKEN_SPLIT_REGEX.source, "gu"))) {
    const from = match.index;
    const to = from + match[0].length;
    if (to - from > MAX_PIECE_CHARS) {
      if (from > start) yield text.slice(start, from);
      for (let i = from; i < to;) {
        let j = Math.min(to, i + MAX_PIECE_CHARS);
        if (j < to && isHighSurrogate(text.charCodeAt(j - 1))) j -= 1;
        yield text.slice(i, j);
        i = j;
      }
      start = to;
    } else if (to - start >= SEGMENT_CHARS) {
      yield text.slice(start, to);
      start = to;
    }
  }
  if (start < text.length) yield text.slice(start);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Tokens of one text; linear in its length. */
export function countTextTokens(text: string): number {
  let total = 0;
  for (const segment of segments(text)) total += countTokens(segment, PLAIN_TEXT);
  return total;
}

/** Upper bound of the tokens of a text without tokenizing it: every token covers at least one byte. */
export function textTokenUpperBound(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

export type CountOptions = {
  /** Stop once the count reaches this (the answer is then ≥ limit). */
  limit?: number;
  /** Stop working (rejects) when the request no longer needs the count: an AbortSignal, or anything that can throw. */
  signal?: Pick<AbortSignal, "throwIfAborted">;
};

/**
 * Counts several texts in slices of a few milliseconds, yielding to the event loop between slices.
 * Returns the sum (or a value ≥ limit once the limit is reached).
 */
export async function countTokensSliced(texts: readonly string[], options: CountOptions = {}): Promise<number> {
  const limit = options.limit ?? Infinity;
  let total = 0;
  let sliceStart = performance.now();
  for (const text of texts) {
    for (const segment of segments(text)) {
      total += countTokens(segment, PLAIN_TEXT);
      if (total >= limit) return total;
      if (performance.now() - sliceStart >= SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        options.signal?.throwIfAborted();
        sliceStart = performance.now();
      }
    }
  }
  return total;
}

// ─── what a request and a reply consist of ───────────────────────────────────

type ContentPart = { type: string; text?: string; refusal?: string };
type ToolCall = { function: { name: string; arguments: string } };

export type CountableMessage = {
  role: string;
  name?: string | null;
  content?: string | readonly ContentPart[] | null;
  tool_calls?: readonly ToolCall[] | null;
  tool_call_id?: string | null;
  refusal?: string | null;
};

export type CountableRequest = {
  messages: readonly CountableMessage[];
  tools?: readonly { function: { name: string; description?: string | null; parameters?: unknown; strict?: boolean | null } }[] | null;
  response_format?: { type: string; json_schema?: { name: string; description?: string | null; schema?: unknown } } | null;
};

export type CountableReply = {
  content?: string | null;
  refusal?: string | null;
  reasoning_content?: string | null;
  tool_calls?: readonly ToolCall[] | null;
};

/** The texts a prompt is counted from, the fixed overhead tokens around them, and its images. */
export type PromptMaterial = { texts: string[]; fixedTokens: number; images: number };

export function promptMaterial(request: CountableRequest): PromptMaterial {
  const texts: string[] = [];
  let fixedTokens = REPLY_PRIMING_TOKENS;
  let images = 0;
  for (const message of request.messages) {
    fixedTokens += PER_MESSAGE_OVERHEAD_TOKENS;
    texts.push(message.role);
    if (message.name) texts.push(message.name);
    if (typeof message.content === "string") texts.push(message.content);
    else if (Array.isArray(message.content)) {
      for (const part of message.content as readonly ContentPart[]) {
        if (part.type === "image_url") images += 1;
        else if (typeof part.text === "string") texts.push(part.text);
        else if (typeof part.refusal === "string") texts.push(part.refusal);
      }
    }
    if (message.refusal) texts.push(message.refusal);
    if (message.tool_call_id) texts.push(message.tool_call_id);
    for (const call of message.tool_calls ?? []) {
      fixedTokens += PER_TOOL_CALL_OVERHEAD_TOKENS;
      texts.push(call.function.name, call.function.arguments);
    }
  }
  for (const tool of request.tools ?? []) {
    fixedTokens += PER_TOOL_OVERHEAD_TOKENS;
    texts.push(JSON.stringify(tool.function));
  }
  const schema = request.response_format?.type === "json_schema" ? request.response_format.json_schema : undefined;
  if (schema) {
    fixedTokens += SCHEMA_OVERHEAD_TOKENS;
    texts.push(JSON.stringify(schema));
  }
  return { texts, fixedTokens, images };
}

export function replyMaterial(reply: CountableReply): PromptMaterial {
  const texts: string[] = [];
  let fixedTokens = 0;
  for (const text of [reply.content, reply.refusal, reply.reasoning_content]) if (text) texts.push(text);
  for (const call of reply.tool_calls ?? []) {
    fixedTokens += PER_TOOL_CALL_OVERHEAD_TOKENS;
    texts.push(call.function.name, call.function.arguments);
  }
  return { texts, fixedTokens, images: 0 };
}

export type TokenBounds = { lower: number; upper: number; textBytes: number };

/** Bounds of the token count from byte lengths alone (no tokenizing): linear and cheap. */
export function tokenBounds(material: PromptMaterial): TokenBounds {
  let textBytes = 0;
  let lower = material.fixedTokens + material.images;
  for (const text of material.texts) {
    const bytes = Buffer.byteLength(text, "utf8");
    textBytes += bytes;
    lower += Math.ceil(bytes / MAX_TOKEN_BYTES);
  }
  return { lower, upper: material.fixedTokens + material.images * IMAGE_TOKENS + textBytes, textBytes };
}

/** The exact count (by this module's rules), sliced: see countTokensSliced. */
export async function countMaterialTokens(material: PromptMaterial, options: CountOptions = {}): Promise<number> {
  const fixed = material.fixedTokens + material.images * IMAGE_TOKENS;
  const limit = options.limit === undefined ? undefined : Math.max(0, options.limit - fixed);
  return fixed + (await countTokensSliced(material.texts, { ...options, limit }));
}

export function countPromptTokens(request: CountableRequest, options: CountOptions = {}): Promise<number> {
  return countMaterialTokens(promptMaterial(request), options);
}

export function countReplyTokens(reply: CountableReply, options: CountOptions = {}): Promise<number> {
  return countMaterialTokens(replyMaterial(reply), options);
}

/** Synchronous prompt count of plain text messages (tests and small fixed inputs). */
export function countChatPromptTokens(messages: readonly CountableMessage[]): number {
  const material = promptMaterial({ messages });
  return material.fixedTokens + material.images * IMAGE_TOKENS + material.texts.reduce((n, t) => n + countTextTokens(t), 0);
}

/**
 * Longest prefix of `text` whose countTextTokens is at most `maxTokens`. For the reference upstream's short
 * replies only (it encodes the whole text). Re-counts after decoding because a token slice can split a
 * multi-byte character, and the decoded prefix does not always re-encode to the same tokens.
 */
export function truncateTextToTokens(text: string, maxTokens: number): string {
  if (countTextTokens(text) <= maxTokens) return text;
  const tokens = encode(text, PLAIN_TEXT);
  for (let keep = Math.max(0, Math.min(maxTokens, tokens.length)); keep > 0; keep--) {
    const prefix = decode(tokens.slice(0, keep));
    if (!prefix.endsWith("\uFFFD") && countTextTokens(prefix) <= maxTokens) return prefix;
  }
  return "";
}
