/**
 * The reference upstream's modes: how it misbehaves (or how it answers) on purpose, chosen per server
 * (`defaultMode`, `--mode`) or per request (`X-Upstream-Mode`, which replaces the default whole).
 *
 * A mode is one part, or several joined by "+" ("reasoning+die-after:3", "latency:200+error:503"), at most one part
 * of each group:
 * - reply: what is answered. ok | no-usage | bad-shape | inflate | truncate | break-schema | pad-reasoning
 *   | reasoning | parallel-tools | long:<tokens> | substitute:<model>
 * - latency:<ms>: a wait before anything is answered.
 * - fault: instead of an answer. timeout | garbage | error:<status> | flaky:<n>
 * - pace:<ms>: the wait per generated token of a stream (else the server's tokenDelayMs).
 * - first-token:<ms>: a stream's headers go out, then nothing for <ms>.
 * - ending: how a stream ends (a stream request; a non-streamed one is answered as if it were absent).
 *   die-after:<n> | error-after:<n> | finish-error-after:<n> | stall-after:<n> | garbage-after:<n> | no-done
 *   | no-stream | json-stream
 * - comments: an SSE comment line before every event of a stream, as OpenRouter's processing notices.
 * - cache: prompt caching (issue 40). cache: it keeps the prefixes it was sent (at every message end, for the
 *   server's cacheRetentionMs) and reports the longest one it saw as `prompt_tokens_details.cached_tokens`, an honest
 *   caching provider; cache-zero: it reports 0 cached tokens whatever it saw (a supplier billing a cached prefix as
 *   new).
 */

type ReplyKind =
  "ok" | "no-usage" | "bad-shape" | "inflate" | "truncate" | "break-schema" | "pad-reasoning" | "reasoning" | "parallel-tools";
type FaultKind = "timeout" | "garbage";
type CountedEnding = "die-after" | "error-after" | "finish-error-after" | "stall-after" | "garbage-after";
type PlainEnding = "no-done" | "no-stream" | "json-stream";
type CacheKind = "cache" | "cache-zero";

type ModePart =
  | ReplyKind
  | FaultKind
  | PlainEnding
  | CacheKind
  | "comments"
  | `latency:${number}`
  | `error:${number}`
  | `flaky:${number}`
  | `substitute:${string}`
  | `long:${number}`
  | `pace:${number}`
  | `first-token:${number}`
  | `${CountedEnding}:${number}`;

export type UpstreamMode = ModePart | `${ModePart}+${string}`;

export type ReplyMode =
  | { kind: ReplyKind }
  /** Serves another model under the requested name: the reply is the other model's, and so is the answer's `model`. */
  | { kind: "substitute"; model: string }
  /** A text reply of this many tokens (within max_tokens), for streams long enough to fill a socket. */
  | { kind: "long"; tokens: number };

export type FaultMode =
  | { kind: FaultKind }
  | { kind: "error"; status: number }
  /** Every n-th chat request (counted per server) fails with HTTP 500; the others are answered: a flaky provider. */
  | { kind: "flaky"; every: number };

/** `after`: generated chunks (content, reasoning, tool-call names and argument fragments) sent before it happens. */
export type EndingMode = { kind: CountedEnding; after: number } | { kind: PlainEnding };

export type ResolvedMode = {
  reply: ReplyMode;
  latencyMs: number;
  fault: FaultMode | null;
  /** Per generated token of a stream; null: the server's. */
  paceMs: number | null;
  firstTokenMs: number;
  ending: EndingMode | null;
  comments: boolean;
  /** Prompt caching: honest (cache) or claiming none (cache-zero); null: no cache reported. */
  cache: CacheKind | null;
};

const MAX_MS = 600_000;
const REPLY_KINDS = new Set<string>([
  "ok",
  "no-usage",
  "bad-shape",
  "inflate",
  "truncate",
  "break-schema",
  "pad-reasoning",
  "reasoning",
  "parallel-tools",
]);
const COUNTED_ENDINGS = new Set<string>(["die-after", "error-after", "finish-error-after", "stall-after", "garbage-after"]);
const PLAIN_ENDINGS = new Set<string>(["no-done", "no-stream", "json-stream"]);

type Group = "reply" | "latency" | "fault" | "pace" | "first-token" | "ending" | "comments" | "cache";
type Parsed = { group: Group; canonical: string; apply: (mode: ResolvedMode) => void };

const ms = (raw: string) => (/^\d{1,7}$/.test(raw) && Number(raw) <= MAX_MS ? Number(raw) : null);
const count = (raw: string, min: number, max: number) =>
  /^\d{1,7}$/.test(raw) && Number(raw) >= min && Number(raw) <= max ? Number(raw) : null;

function parsePart(part: string): Parsed | null {
  if (REPLY_KINDS.has(part)) return { group: "reply", canonical: part, apply: (m) => (m.reply = { kind: part as ReplyKind }) };
  if (part === "timeout" || part === "garbage") return { group: "fault", canonical: part, apply: (m) => (m.fault = { kind: part }) };
  if (PLAIN_ENDINGS.has(part)) return { group: "ending", canonical: part, apply: (m) => (m.ending = { kind: part as PlainEnding }) };
  if (part === "comments") return { group: "comments", canonical: part, apply: (m) => (m.comments = true) };
  if (part === "cache" || part === "cache-zero") return { group: "cache", canonical: part, apply: (m) => (m.cache = part) };
  const colon = part.indexOf(":");
  if (colon < 0) return null;
  const [kind, arg] = [part.slice(0, colon), part.slice(colon + 1)];
  const parsed = (group: Group, value: number | null, apply: (m: ResolvedMode, v: number) => void): Parsed | null =>
    value === null ? null : { group, canonical: `${kind}:${value}`, apply: (m) => apply(m, value) };
  switch (kind) {
    case "latency":
      return parsed("latency", ms(arg), (m, v) => (m.latencyMs = v));
    case "error":
      return parsed("fault", /^\d{3}$/.test(arg) ? count(arg, 400, 599) : null, (m, v) => (m.fault = { kind: "error", status: v }));
    case "flaky":
      return parsed("fault", count(arg, 1, 9999), (m, v) => (m.fault = { kind: "flaky", every: v }));
    case "long":
      return parsed("reply", count(arg, 1, 1_000_000), (m, v) => (m.reply = { kind: "long", tokens: v }));
    case "pace":
      return parsed("pace", ms(arg), (m, v) => (m.paceMs = v));
    case "first-token":
      return parsed("first-token", ms(arg), (m, v) => (m.firstTokenMs = v));
    case "substitute": {
      if (!/^[a-z0-9][a-z0-9._:/-]{0,99}$/.test(arg)) return null;
      return { group: "reply", canonical: part, apply: (m) => (m.reply = { kind: "substitute", model: arg }) };
    }
    default:
      if (!COUNTED_ENDINGS.has(kind)) return null;
      return parsed("ending", count(arg, 0, 1_000_000), (m, v) => (m.ending = { kind: kind as CountedEnding, after: v }));
  }
}

function parseParts(raw: string): Parsed[] | null {
  const parts = raw
    .trim()
    .toLowerCase()
    .split("+")
    .map((p) => parsePart(p.trim()));
  if (parts.some((p) => p === null)) return null;
  const groups = new Set(parts.map((p) => p!.group));
  return groups.size === parts.length ? (parts as Parsed[]) : null;
}

/** The canonical spelling of a mode (lower case, trimmed, numbers normalized), or null when it is not one. */
export function parseUpstreamMode(raw: string): UpstreamMode | null {
  const parts = parseParts(raw);
  return parts ? (parts.map((p) => p.canonical).join("+") as UpstreamMode) : null;
}

/** What a valid mode asks for; throws on an invalid one (parse it first). */
export function resolveMode(mode: UpstreamMode): ResolvedMode {
  const parts = parseParts(mode);
  if (!parts) throw new Error(`Invalid upstream mode '${mode}'`);
  const resolved: ResolvedMode = {
    reply: { kind: "ok" },
    latencyMs: 0,
    fault: null,
    paceMs: null,
    firstTokenMs: 0,
    ending: null,
    comments: false,
    cache: null,
  };
  for (const part of parts) part.apply(resolved);
  return resolved;
}
