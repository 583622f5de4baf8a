/**
 * The prompt prefixes svc forwards, as the reservation routes by them and the clear records them (issue 40).
 *
 * A request's prefix chain: a running SHA-256 over the model id, the tools and the messages in order, read out at
 * the end of the first message where the prompt's text (tools included) has crossed another PREFIX_BLOCK_CHARS
 * characters. A later request that repeats the same model, tools and first messages has the same chain up to where
 * it diverges, so the longest hash it shares with what svc sent an offer is the prefix that offer was sent.
 *
 * Why message ends, and why 4,096 characters. A chat prefix cache (vLLM's, SGLang's, llama.cpp's, OpenAI's,
 * Anthropic's) keeps the rendered prompt's tokens up to the point two requests diverge; a session grows by appending
 * messages, so a message end is where its requests share a prefix exactly, and svc's own token count of the messages
 * before it (svc's figure, cached tokens at most: the upstream's template adds, never removes) is exact without
 * tokenizing anything before the forward. Every message end would be as many hashes as messages; one per crossed
 * block bounds a chain to the prompt's size / 4,096 (at most 245 for the 1 MB body limit), and 4,096 characters are
 * about 1,024 tokens, the smallest prefix OpenAI and Anthropic cache at all. A prompt of fewer characters of text has
 * no chain: nothing to look up or record, and no work on the hot path beyond one comparison.
 *
 * The work: one pass of hashing over the prompt's text, no tokenizing, no serialization beyond the tools'. The
 * estimated tokens sent with each hash (characters / 4) only order offers by effective price; what is billed is svc's
 * count of the matched prefix (sentPrefixTokens), made after the answer, off the hot path.
 */
import "server-only";
import { createHash, type Hash } from "node:crypto";
import { db } from "@/lib/db/client";
import { countMaterialTokens, promptMaterial, REPLY_PRIMING_TOKENS, type CountableRequest } from "@/lib/upstream/tokens";

/** A chain's block: a hash is read out at the first message end past each multiple of this many characters of text. */
export const PREFIX_BLOCK_CHARS = 4096;
/** Characters per token the routing estimate assumes (English text and code run 3.5 to 4.5). */
const CHARS_PER_TOKEN = 4;

/** One link of the chain: the hash of the prompt up to and including `messages` messages, and its estimated tokens. */
export type PromptPrefix = { hash: string; messages: number; tokens: number };

type PrefixRequest = CountableRequest & { messages: readonly PrefixMessage[] };
type PrefixMessage = CountableRequest["messages"][number] & {
  content?: string | readonly { type: string; text?: string; refusal?: string; image_url?: { url: string } }[] | null;
};

/**
 * The request's prefix chain, shortest first; null when its text is shorter than one block (textBytes: the byte
 * length of its text, which is at least its length in characters).
 */
export function promptPrefixes(modelId: string, request: PrefixRequest, textBytes: number): PromptPrefix[] | null {
  if (textBytes < PREFIX_BLOCK_CHARS) return null;
  const hash = createHash("sha256");
  hash.update(modelId);
  let chars = 0;
  const add = (text: string, counts = true) => {
    hash.update("\u0000");
    hash.update(text);
    if (counts) chars += text.length;
  };
  if (request.tools?.length) add(JSON.stringify(request.tools.map((t) => t.function)));
  const chain: PromptPrefix[] = [];
  let next = PREFIX_BLOCK_CHARS;
  request.messages.forEach((message, i) => {
    add(`\u0001${message.role}`);
    if (message.name) add(message.name);
    if (typeof message.content === "string") add(message.content);
    else if (Array.isArray(message.content)) {
      for (const part of message.content) {
        if (typeof part.text === "string") add(part.text);
        else if (typeof part.refusal === "string") add(part.refusal);
        else if (part.image_url) add(part.image_url.url, false);
      }
    }
    if (message.refusal) add(message.refusal);
    if (message.tool_call_id) add(message.tool_call_id);
    for (const call of message.tool_calls ?? []) add(`${call.function.name}\u0002${call.function.arguments}`);
    if (chars >= next) {
      chain.push({ hash: digest(hash), messages: i + 1, tokens: Math.floor(chars / CHARS_PER_TOKEN) });
      next = (Math.floor(chars / PREFIX_BLOCK_CHARS) + 1) * PREFIX_BLOCK_CHARS;
    }
  });
  return chain.length > 0 ? chain : null;
}

/** 128 bits of the running hash, base64url (22 characters): the chain so far, the hash itself left running. */
function digest(hash: Hash): string {
  return hash.copy().digest("base64url").slice(0, 22);
}

/** The chain as the reservation takes it: [[hash, estimated tokens], ...] (svc_reserve_batch's p_prefixes). */
export function prefixesParam(chain: readonly PromptPrefix[] | null): string | null {
  return chain === null ? null : JSON.stringify(chain.map((p) => [p.hash, p.tokens]));
}

/** The chain's hashes as the clear records them (svc_clear_item.prefix_hashes). */
export function prefixHashes(chain: readonly PromptPrefix[] | null): string | null {
  return chain === null ? null : chain.map((p) => p.hash).join(" ");
}

/**
 * svc's figure of the cached tokens: its own count (lib/upstream/tokens.ts, the prompt's rules) of the tools and the
 * first `messages` messages, without the reply priming that only the whole prompt has.
 */
export async function sentPrefixTokens(request: CountableRequest, messages: number): Promise<number> {
  const material = promptMaterial({ messages: request.messages.slice(0, messages), tools: request.tools });
  return Math.max(0, (await countMaterialTokens(material)) - REPLY_PRIMING_TOKENS);
}

/**
 * Deletes the prefixes past their offer's retention, at most `batch` a call (the background job runs it every
 * minute): the table holds what caching offers were sent within their retention, and no more.
 */
export async function sweepExpiredPromptPrefixes(now = new Date(), batch = 10_000): Promise<number> {
  return db.$executeRaw`
    DELETE FROM prompt_prefixes WHERE (hash, offer_id) IN (
      SELECT hash, offer_id FROM prompt_prefixes WHERE expires_at <= ${now}::timestamptz LIMIT ${batch})`;
}
