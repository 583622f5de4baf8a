import "server-only";
import type { z } from "zod";
import { env } from "@/lib/env";
import { AppError, type AppErrorCode } from "@/lib/errors";
import { ERROR_STATUS } from "@/lib/http/errors";
import { exceededJsonLimit, type JsonLimits } from "@/lib/json-limits";

/**
 * Bodies a server reads itself (lib/http/node-adapter.ts): the Request then carries none, and readJsonBody takes
 * these bytes instead of a stream, with the same limit and checks. A function is called only when the body is
 * needed, after the checks that come first (credentials, Content-Length), and returns at most the limit plus a byte.
 */
const readBodies = new WeakMap<Request, Uint8Array | (() => Promise<Uint8Array>)>();

export function attachReadBody(req: Request, body: Uint8Array | (() => Promise<Uint8Array>)): void {
  readBodies.set(req, body);
}

/**
 * Reads a JSON body with a byte limit, rejecting a wrong content type or malformed JSON with a clear 400, and a body
 * nested deeper or holding more values than the configured limits (MAX_JSON_DEPTH, MAX_JSON_VALUES) with a 400 naming
 * the limit, found by a linear scan of the text before it is parsed: no work after this is more than linear in it.
 */
export async function readJsonBody(req: Request, maxBytes: number): Promise<unknown> {
  const contentType = req.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(contentType)) {
    throw new AppError(
      "unsupported_content_type",
      `Expected Content-Type: application/json, got ${contentType ? `"${contentType}"` : "none"}.`,
    );
  }
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);

  const text = await readTextWithLimit(req, maxBytes);
  if (text === null) throw new AppError("invalid_json", "The request body is not valid UTF-8 (JSON must be UTF-8).");
  if (text.trim() === "") throw new AppError("invalid_json", "The request body is empty; expected a JSON object.");
  assertWithinJsonLimits(text, { maxDepth: env.MAX_JSON_DEPTH, maxValues: env.MAX_JSON_VALUES });
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AppError("invalid_json", `The request body is not valid JSON: ${(error as Error).message}`);
  }
}

function assertWithinJsonLimits(text: string, limits: JsonLimits) {
  const exceeded = exceededJsonLimit(text, limits);
  if (exceeded?.limit === "depth") {
    throw new AppError("json_too_deep", `The request body nests deeper than ${exceeded.max} levels of objects and arrays.`, {
      details: { limit_depth: exceeded.max },
    });
  }
  if (exceeded?.limit === "values") {
    throw new AppError("json_too_many_values", `The request body holds more than ${exceeded.max} JSON values.`, {
      details: { limit_values: exceeded.max },
    });
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The body as text, or null when it is not valid UTF-8 (never replaced by U+FFFD: what we forward is what we read). */
async function readTextWithLimit(req: Request, maxBytes: number): Promise<string | null> {
  const attached = readBodies.get(req);
  if (attached) {
    const read = typeof attached === "function" ? await attached() : attached;
    if (read.byteLength > maxBytes) throw tooLarge(maxBytes);
    return decodeUtf8(read);
  }
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return decodeUtf8(Buffer.concat(chunks));
}

function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

function tooLarge(maxBytes: number) {
  return new AppError("payload_too_large", `The request body is larger than ${maxBytes} bytes.`, {
    details: { limit_bytes: maxBytes },
  });
}

/** Query parameters as a plain object; a repeated parameter keeps its last value. */
export function readQuery(req: Request): Record<string, string> {
  return Object.fromEntries(new URL(req.url).searchParams.entries());
}

/**
 * Parses input with a zod schema, turning the first problems into one readable 400. Every body and query goes
 * through here, so what no field may hold is refused here once, whatever the route's schema says: a NUL character
 * in any string (PostgreSQL text cannot store one) or an unpaired surrogate (not text at all), and an integer amount outside the 64-bit columns money lives in.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, where: "body" | "query"): z.infer<S> {
  assertStorableText(input, where);
  const result = schema.safeParse(input);
  if (result.success) {
    assertWithinStorableRange(result.data, where);
    return result.data;
  }
  const issues = result.error.issues;
  // A field can name the code of its issue (stream_not_supported, invalid_amount): such an issue wins over the others.
  const coded = issues.find((i) => codeOf(i) !== null);
  if (coded) {
    const param = coded.path.join(".");
    const message = param && !coded.message.startsWith(param) ? `${param}: ${coded.message}` : coded.message;
    throw new AppError(codeOf(coded)!, message.endsWith(".") ? message : `${message}.`, { details: { param: param || null } });
  }
  const unknown = issues.find((i) => i.code === "unrecognized_keys");
  if (unknown && "keys" in unknown) {
    // At most a few named: an object of 100,000 unknown keys makes no message of a megabyte.
    const named = (unknown.keys as string[]).slice(0, MAX_NAMED_KEYS).map((k) => `"${[...unknown.path, k].join(".")}"`);
    const rest = unknown.keys.length - named.length;
    const keys = `${named.join(", ")}${rest > 0 ? ` and ${rest} more` : ""}`;
    throw new AppError("unknown_field", `Unknown field${unknown.keys.length > 1 ? "s" : ""} in ${where}: ${keys}.`, {
      details: { param: [...unknown.path, unknown.keys[0]].join(".") },
    });
  }
  const first = issues[0];
  const path = first.path.length > 0 ? first.path.join(".") : where;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? "s" : ""})` : "";
  throw new AppError("invalid_request", `Invalid ${where === "body" ? "request body" : "query"}: ${path}: ${first.message}${more}.`, {
    details: { param: first.path.join(".") || null },
  });
}

const MAX_NAMED_KEYS = 10;

/** The 400 code an issue names for itself (`params.code`), if any. */
function codeOf(issue: z.core.$ZodIssue): AppErrorCode | null {
  const code = issue.code === "custom" ? (issue.params as { code?: unknown } | undefined)?.code : undefined;
  return typeof code === "string" && code in ERROR_STATUS && ERROR_STATUS[code as AppErrorCode] === 400 ? (code as AppErrorCode) : null;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A container met by firstProblem(): its key in its parent, and the parent's frame, from which its path is made when needed. */
type Frame = { value: object; key: string | number | null; parent: Frame | null };

type Check = (value: unknown, key: string | null) => string | null;

const isContainer = (value: unknown): value is object => value !== null && typeof value === "object" && !(value instanceof Date);

/**
 * The first value in a parsed JSON value or query (or zod's output of one) that `check` finds a problem with, given
 * the value and, for an object's member, its key; and that value's path. Iterative (a deeply nested body cannot
 * overflow the stack) and linear whatever the shape: every value is checked once where it is met, with no allocation
 * but a frame per container, and no path is built until there is a problem to name (a copy of the path at every
 * level made a chain of 24,000 nested arrays cost seconds).
 */
function firstProblem(root: unknown, check: Check): { problem: string; path: string[] } | null {
  const atRoot = check(root, null);
  if (atRoot !== null) return { problem: atRoot, path: [] };
  if (!isContainer(root)) return null;
  const stack: Frame[] = [{ value: root, key: null, parent: null }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const container = frame.value;
    if (Array.isArray(container)) {
      for (let i = 0; i < container.length; i++) {
        const item: unknown = container[i];
        const problem = check(item, null);
        if (problem !== null) return { problem, path: [...pathOf(frame), String(i)] };
        if (isContainer(item)) stack.push({ value: item, key: i, parent: frame });
      }
    } else {
      const record = container as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const item = record[key];
        const problem = check(item, key);
        if (problem !== null) return { problem, path: [...pathOf(frame), key] };
        if (isContainer(item)) stack.push({ value: item, key, parent: frame });
      }
    }
  }
  return null;
}

/** A container's path from the root. */
function pathOf(frame: Frame): string[] {
  const path: string[] = [];
  for (let at: Frame | null = frame; at?.parent; at = at.parent) path.push(String(at.key));
  return path.reverse();
}

/** A UTF-16 surrogate without its pair: not a character, and UTF-8 (what PostgreSQL and the upstreams read) has no way to say it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** What a text needs a closer look for: most have neither, and one scan says so. */
// eslint-disable-next-line no-control-regex -- a NUL is one of the two things it looks for
const NUL_OR_SURROGATE = /[\u0000\ud800-\udfff]/;

function textProblem(text: string | null): string | null {
  if (text === null || !NUL_OR_SURROGATE.test(text)) return null;
  if (text.includes("\u0000")) return "must not contain a NUL character (\\u0000)";
  if (LONE_SURROGATE.test(text)) return "must not contain an unpaired UTF-16 surrogate (\\ud800-\\udfff)";
  return null;
}

function assertStorableText(input: unknown, where: "body" | "query") {
  const found = firstProblem(input, (value, key) => textProblem(key) ?? (typeof value === "string" ? textProblem(value) : null));
  if (found) {
    const param = found.path.map((p) => p.replaceAll("\u0000", "\\0")).join(".");
    throw new AppError("invalid_request", `Invalid ${where === "body" ? "request body" : "query"}: ${param || where}: ${found.problem}.`, {
      details: { param: param || null },
    });
  }
}

function assertWithinStorableRange(output: unknown, where: "body" | "query") {
  const found = firstProblem(output, (value) =>
    typeof value === "bigint" && (value < INT64_MIN || value > INT64_MAX) ? "the amount is too large" : null,
  );
  if (found) {
    const param = found.path.join(".");
    throw new AppError(
      "amount_out_of_range",
      `Invalid ${where === "body" ? "request body" : "query"}: ${param || where}: ${found.problem}.`,
      {
        details: { param: param || null },
      },
    );
  }
}
