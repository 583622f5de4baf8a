import "server-only";

/**
 * Bounded work per byte of JSON: how deep a text nests and how many values it holds, found by one linear scan of the
 * text before JSON.parse builds anything from it. Everything that later walks a parsed value (parseInput's checks,
 * zod, token counting, JSON.stringify and structuredClone, which recurse and overflow the stack a few thousand levels
 * down) then meets nothing deeper or larger than these limits. Request bodies are held to MAX_JSON_DEPTH and
 * MAX_JSON_VALUES (lib/env.ts, lib/http/body.ts); a supplier's answer, and the JSON a probe's answer carries, to the
 * depth only (lib/upstream/client.ts, lib/probes/judge.ts): their size is the response cap's.
 *
 * A value is an object, an array, a string, a number, true, false or null; an object's keys are not values. The scan
 * does not validate: JSON.parse does, after it, on text the scan found within the limits (a text that is not JSON
 * may be refused for its depth first, which is as true of it).
 */
export type JsonLimits = { maxDepth: number; maxValues: number };

/** Which limit a text exceeds, and the limit. */
export type JsonLimitExceeded = { limit: "depth" | "values"; max: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** The first limit the JSON text exceeds, or null: one pass over the text, constant work per character. */
export function exceededJsonLimit(text: string, limits: JsonLimits): JsonLimitExceeded | null {
  let depth = 0;
  let values = 0;
  // Inside a number or a literal (true, false, null): its characters after the first start no value.
  let inScalar = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      inScalar = false;
      i = closingQuote(text, i);
      let next = i + 1;
      while (next < text.length && isWhitespace(text.charCodeAt(next))) next++;
      // A key: its colon is consumed with it, and the value after it is counted when it starts.
      if (text.charCodeAt(next) === COLON) {
        i = next;
        continue;
      }
      values++;
    } else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      inScalar = false;
      values++;
      if (++depth > limits.maxDepth) return { limit: "depth", max: limits.maxDepth };
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) {
      inScalar = false;
      if (depth > 0) depth--;
    } else if (code === COMMA || code === COLON || isWhitespace(code)) {
      inScalar = false;
    } else if (!inScalar) {
      inScalar = true;
      values++;
    }
    if (values > limits.maxValues) return { limit: "values", max: limits.maxValues };
  }
  return null;
}

/** The index of the quote that closes the string opened at `open` (the text's length when none does). */
function closingQuote(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === BACKSLASH) i++;
    else if (code === QUOTE) return i;
  }
  return text.length;
}
