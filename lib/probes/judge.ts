import "server-only";
import type { ProbeCheck, ProbeFailure } from "@/lib/supply/probe-evidence";
import { env } from "@/lib/env";
import { exceededJsonLimit } from "@/lib/json-limits";
import { LIMIT_MAX_TOKENS, type ProbeDefinition } from "@/lib/probes/catalog";
import { USAGE_TOLERANCE_FLOOR_TOKENS, USAGE_TOLERANCE_PERCENT } from "@/lib/upstream/metering";
import { countTextTokens } from "@/lib/upstream/tokens";
import type { BilledUsage } from "@/lib/upstream/metering";
import type { UpstreamAnswer } from "@/lib/upstream/answer";

/**
 * Judging one probe's answer on its own (model; answer: an echo probe's code is in it; stop: no stop sequence the
 * request sent is in it; max_tokens: the limit probe's answer, by svc's count, within its cap and the usage
 * tolerance; json_schema, tool_schema, truncated, error, and usage: a claim outside
 * what the probe allows or its answer makes plausible, hidden reasoning included, by the buyer's own billing rule,
 * lib/upstream/metering.ts); the checks that compare offers (consensus, reference) are the round's
 * (lib/probes/round.ts). Every expected/got is bounded
 * (EVIDENCE_MAX_CHARS) before it is stored or published: an upstream's answer is the supplier's text.
 *
 * An outage is not a fidelity failure: no answer at all (a timeout, a refused connection), or an HTTP status that
 * says the upstream is down, overloaded or misconfigured (5xx, 429, 401, 403, 408), is left to the offer's health,
 * which already takes failing offers off the book. An upstream that answers a probe it declares it serves with a
 * refusal of the request (400, 404, 422), or with something that is not a chat completion, fails `error`.
 */

export const EVIDENCE_MAX_CHARS = 320;
const REFUSED_STATUSES = new Set([400, 404, 422]);

export function bounded(text: string | null | undefined, max = EVIDENCE_MAX_CHARS): string | null {
  if (text === null || text === undefined) return null;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function failure(check: ProbeCheck, expected: string | null, got: string | null): ProbeFailure {
  return { check, expected: bounded(expected), got: bounded(got) };
}

/** An HTTP answer that is not a chat completion: an outage (null) or the upstream's fault (a failure). */
export function judgeHttpFailure(status: number, rawText: string): ProbeFailure | null {
  if (status === 200 || REFUSED_STATUSES.has(status)) {
    return failure("error", "a chat completion", `HTTP ${status}: ${rawText.replace(/\s+/g, " ").trim()}`);
  }
  return null;
}

/**
 * The answer's `model` names what the offer maps the model to, or a dated snapshot of it (`gpt-4o` answered as
 * `gpt-4o-2024-08-06`, `mistral-large` as `mistral-large-2407`, `claude-3-5-sonnet` as `claude-3-5-sonnet-20240620`);
 * case is ignored. An answer without a `model` fails: the field is part of the chat completion.
 */
export function modelMatches(expected: string, got: string | null): boolean {
  if (got === null) return false;
  const e = expected.toLowerCase();
  const g = got.trim().toLowerCase();
  if (g === e) return true;
  return g.startsWith(`${e}-`) && /^(\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$/.test(g.slice(e.length + 1));
}

/** A one-word answer's comparable form: lower case, inner whitespace collapsed, surrounding quotes and punctuation gone. */
export function normalizeText(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^["'`*_\s]+|["'`*_.,;:!?\s]+$/g, "");
}

/** JSON with its object keys sorted, so equal values compare equal as text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The answer's JSON; not an answer to judge when it is not JSON, or nests deeper than a request may (MAX_JSON_DEPTH):
 * no probe's schema nests that deep, and canonicalJson (recursive) would overflow the stack on it.
 */
function parseJson(text: string): { ok: true; value: unknown } | { ok: false; why: string } {
  if (exceededJsonLimit(text, { maxDepth: env.MAX_JSON_DEPTH, maxValues: Number.POSITIVE_INFINITY })) {
    return { ok: false, why: `nested deeper than ${env.MAX_JSON_DEPTH} levels` };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, why: "not JSON" };
  }
}

/**
 * Whether a value satisfies one of the probes' own schemas (objects, required and additionalProperties, enums,
 * strings, integers, numbers, booleans, arrays): the probes are fixed in code, so this is all they need.
 */
export function schemaViolation(schema: Record<string, unknown>, value: unknown, path = "$"): string | null {
  if (Array.isArray(schema.enum) && !schema.enum.some((v) => canonicalJson(v) === canonicalJson(value))) {
    return `${path} is not one of ${JSON.stringify(schema.enum)}`;
  }
  switch (schema.type) {
    case "object": {
      if (value === null || typeof value !== "object" || Array.isArray(value)) return `${path} is not an object`;
      const record = value as Record<string, unknown>;
      const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      for (const key of (schema.required ?? []) as string[]) if (!(key in record)) return `${path}.${key} is missing`;
      for (const [key, v] of Object.entries(record)) {
        if (key in properties) {
          const inner = schemaViolation(properties[key], v, `${path}.${key}`);
          if (inner) return inner;
        } else if (schema.additionalProperties === false) return `${path}.${key} is not allowed`;
      }
      return null;
    }
    case "array":
      if (!Array.isArray(value)) return `${path} is not an array`;
      for (const [i, v] of value.entries()) {
        const inner = schema.items ? schemaViolation(schema.items as Record<string, unknown>, v, `${path}[${i}]`) : null;
        if (inner) return inner;
      }
      return null;
    case "string":
      return typeof value === "string" ? null : `${path} is not a string`;
    case "integer":
      return Number.isInteger(value) ? null : `${path} is not an integer`;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? null : `${path} is not a number`;
    case "boolean":
      return typeof value === "boolean" ? null : `${path} is not a boolean`;
    default:
      return null;
  }
}

export type AnswerVerdict = {
  /** The comparable form of the answer (bounded), for the consensus and the reference; null when it has none. */
  answer: string | null;
  failures: ProbeFailure[];
};

/** The checks one answer passes or fails by itself. */
export function judgeAnswer(
  probe: ProbeDefinition,
  upstreamModel: string,
  returnedModel: string | null,
  answer: UpstreamAnswer,
): AnswerVerdict {
  const failures: ProbeFailure[] = [];
  if (!modelMatches(upstreamModel, returnedModel)) failures.push(failure("model", upstreamModel, returnedModel));
  const content = answer.message.content ?? "";

  if (probe.kind === "tool") {
    const call = answer.message.tool_calls?.find((c) => c.function.name === probe.toolName);
    if (!call) {
      const got = answer.message.tool_calls?.map((c) => c.function.name).join(", ") || `no tool call: ${content}`;
      failures.push(failure("tool_schema", `a call of ${probe.toolName}`, got));
      return { answer: null, failures };
    }
    const args = parseJson(call.function.arguments);
    const violation = args.ok ? schemaViolation(probe.schema!, args.value) : `the arguments are ${args.why}`;
    if (violation) {
      failures.push(
        failure("tool_schema", `arguments satisfying ${canonicalJson(probe.schema)}`, `${violation}: ${call.function.arguments}`),
      );
      return { answer: null, failures };
    }
    return { answer: bounded(canonicalJson({ name: call.function.name, arguments: args.ok ? args.value : null }), 500), failures };
  }

  const stop = probe.stop?.find((s) => content.includes(s));
  if (stop !== undefined) failures.push(failure("stop", `no ${JSON.stringify(stop)} (a stop sequence sent)`, content));

  if (probe.kind === "limit") {
    // Cut short is what the request asks for; more than its cap (by our count, with the usage tolerance) is not.
    const cap = probe.maxTokens ?? LIMIT_MAX_TOKENS.max;
    const ours = countTextTokens(content);
    if (ours > cap + Math.max(USAGE_TOLERANCE_FLOOR_TOKENS, Math.ceil((cap * USAGE_TOLERANCE_PERCENT) / 100))) {
      failures.push(failure("max_tokens", `at most ${cap} tokens (max_tokens)`, `${ours} tokens: ${content}`));
    }
    if (content.trim() === "") failures.push(failure("truncated", "an answer", "an empty answer"));
    return { answer: null, failures };
  }

  if (answer.finishReason === "length" || content.trim() === "") {
    failures.push(
      failure("truncated", "a complete answer", answer.finishReason === "length" ? `finish_reason length: ${content}` : "an empty answer"),
    );
    return { answer: null, failures };
  }

  if (probe.kind === "json_schema") {
    const parsed = parseJson(content);
    const violation = parsed.ok ? schemaViolation(probe.schema!, parsed.value) : `the answer is ${parsed.why}`;
    if (violation) {
      failures.push(failure("json_schema", `JSON satisfying ${canonicalJson(probe.schema)}`, `${violation}: ${content}`));
      return { answer: null, failures };
    }
    return { answer: bounded(canonicalJson(parsed.ok ? parsed.value : null), 500), failures };
  }
  if (probe.expect !== undefined && !alphanumeric(content).includes(alphanumeric(probe.expect))) {
    failures.push(failure("answer", `an answer containing ${probe.expect}`, content));
  }
  return { answer: bounded(normalizeText(content), 500), failures };
}

/** Letters and digits only, lower case: a code compares equal however an answer punctuates or spaces it. */
function alphanumeric(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, "");
}

/** The answer's usage claim as billed: one the buyer's rule would count against the offer's health fails `usage`. */
export function judgeUsage(billed: Pick<BilledUsage, "outOfBounds">): ProbeFailure | null {
  return billed.outOfBounds === null ? null : failure("usage", "a usage claim within what the probe allows", billed.outOfBounds);
}
