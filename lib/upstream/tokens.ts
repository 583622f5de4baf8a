import { countTokens, decode, encode } from "gpt-tokenizer/encoding/o200k_base";

/**
 * Token accounting shared by the marketplace router and the reference upstream.
 *
 * Encoding: o200k_base (gpt-tokenizer). Third-party models use their own
 * tokenizers, so this is an estimate for them, but it is the exact count the
 * reference upstream reports, which keeps metering testable end to end.
 *
 * Prompt formula (OpenAI cookbook chat format):
 *   prompt_tokens = Σ_messages (PER_MESSAGE_OVERHEAD + tokens(role) + tokens(content))
 *                 + REPLY_PRIMING
 * with PER_MESSAGE_OVERHEAD = 3 (<|im_start|>, separator, <|im_end|>) and
 * REPLY_PRIMING = 3 (<|im_start|>assistant<|message|>).
 */
export const PER_MESSAGE_OVERHEAD_TOKENS = 3;
export const REPLY_PRIMING_TOKENS = 3;

export type TokenCountableMessage = { role: string; content: string };

// User text that happens to contain "<|endoftext|>" must be counted as plain
// text, not rejected (the library throws on special tokens by default).
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

export function countTextTokens(text: string): number {
  return countTokens(text, PLAIN_TEXT);
}

export function countChatPromptTokens(messages: readonly TokenCountableMessage[]): number {
  let total = REPLY_PRIMING_TOKENS;
  for (const message of messages) {
    total += PER_MESSAGE_OVERHEAD_TOKENS + countTextTokens(message.role) + countTextTokens(message.content);
  }
  return total;
}

/**
 * Longest prefix of `text` whose countTextTokens is at most `maxTokens`.
 * Re-counts after decoding because a token slice can split a multi-byte
 * character, and the decoded prefix does not always re-encode to the same tokens.
 */
export function truncateTextToTokens(text: string, maxTokens: number): string {
  const tokens = encode(text, PLAIN_TEXT);
  if (tokens.length <= maxTokens) return text;
  for (let keep = Math.max(0, maxTokens); keep > 0; keep--) {
    const prefix = decode(tokens.slice(0, keep));
    if (!prefix.endsWith("\uFFFD") && countTextTokens(prefix) <= maxTokens) return prefix;
  }
  return "";
}
