import "server-only";
import type { z } from "zod";
import { AppError, type AppErrorCode } from "@/lib/errors";
import { ERROR_STATUS } from "@/lib/http/errors";

/**
 * Bodies a server reads itself (lib/http/node-adapter.ts): the Request then carries none, and readJsonBody takes
 * these bytes instead of a stream, with the same limit and checks. A function is called only when the body is
 * needed, after the checks that come first (credentials, Content-Length), and returns at most the limit plus a byte.
 */
const readBodies = new WeakMap<Request, Uint8Array | (() => Promise<Uint8Array>)>();

export function attachReadBody(req: Request, body: Uint8Array | (() => Promise<Uint8Array>)): void {
  readBodies.set(req, body);
}

/** Reads a JSON body with a byte limit, rejecting a wrong content type or malformed JSON with a clear 400. */
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
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AppError("invalid_json", `The request body is not valid JSON: ${(error as Error).message}`);
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
    const keys = (unknown.keys as string[]).map((k) => `"${[...unknown.path, k].join(".")}"`).join(", ");
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

/** The 400 code an issue names for itself (`params.code`), if any. */
function codeOf(issue: z.core.$ZodIssue): AppErrorCode | null {
  const code = issue.code === "custom" ? (issue.params as { code?: unknown } | undefined)?.code : undefined;
  return typeof code === "string" && code in ERROR_STATUS && ERROR_STATUS[code as AppErrorCode] === 400 ? (code as AppErrorCode) : null;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

type Visit = { value: unknown; path: string[] };

/** Every string (and key) in a parsed JSON value or query, iteratively: a deeply nested body cannot overflow the stack. */
function* walk(root: unknown): Generator<Visit> {
  const stack: Visit[] = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    yield visit;
    const { value, path } = visit;
    if (Array.isArray(value)) value.forEach((item, i) => stack.push({ value: item, path: [...path, String(i)] }));
    else if (value !== null && typeof value === "object" && !(value instanceof Date)) {
      for (const [key, item] of Object.entries(value)) stack.push({ value: item, path: [...path, key] });
    }
  }
}

/** A UTF-16 surrogate without its pair: not a character, and UTF-8 (what PostgreSQL and the upstreams read) has no way to say it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function assertStorableText(input: unknown, where: "body" | "query") {
  for (const { value, path } of walk(input)) {
    const key = path.at(-1);
    const texts = typeof value === "string" ? [value, key] : [key];
    const problem = texts.some((t) => t?.includes("\u0000"))
      ? "must not contain a NUL character (\\u0000)"
      : texts.some((t) => t !== undefined && LONE_SURROGATE.test(t))
        ? "must not contain an unpaired UTF-16 surrogate (\\ud800-\\udfff)"
        : null;
    if (problem) {
      const param = path.map((p) => p.replaceAll("\u0000", "\\0")).join(".");
      throw new AppError("invalid_request", `Invalid ${where === "body" ? "request body" : "query"}: ${param || where}: ${problem}.`, {
        details: { param: param || null },
      });
    }
  }
}

function assertWithinStorableRange(output: unknown, where: "body" | "query") {
  for (const { value, path } of walk(output)) {
    if (typeof value === "bigint" && (value < INT64_MIN || value > INT64_MAX)) {
      const param = path.join(".");
      throw new AppError(
        "amount_out_of_range",
        `Invalid ${where === "body" ? "request body" : "query"}: ${param || where}: the amount is too large.`,
        {
          details: { param: param || null },
        },
      );
    }
  }
}
