import "server-only";
import { Validator, type Schema } from "@cfworker/json-schema";
import { env } from "@/lib/env";
import { exceededJsonLimit } from "@/lib/json-limits";
import type { UpstreamAnswer } from "@/lib/upstream/answer";

/**
 * Whether an answer kept to what the request constrained it to, checked on live traffic after the answer went out
 * (issue 37, as OpenRouter's Auto Exacto checks tool calls): each tool call parses as JSON, names a tool the request
 * sent, and its arguments satisfy that tool's JSON schema; an answer to a `json_schema` response format with
 * `strict: true` parses and satisfies its schema. The outcome per check feeds the offer's published error rates
 * (lib/market/quality/answer-checks.ts).
 *
 * Bounded, since the schemas are the buyer's and the answer the supplier's: nesting past MAX_JSON_DEPTH is a failure
 * without parsing; `pattern`, `patternProperties` and `format` are not checked (a buyer's regular expression run
 * over a supplier's string is a way to stall the event loop), so a string that breaks only those passes.
 */

export type AnswerCheckKind = "tool_call" | "json_schema";
export type AnswerCheckResult = "ok" | "invalid_json" | "unknown_tool" | "schema_mismatch";
export type AnswerCheck = { kind: AnswerCheckKind; result: AnswerCheckResult };

/** What of the request constrains its answer. */
export type AnswerConstraints = {
  tools?: readonly { type: string; function: { name: string; parameters?: Record<string, unknown> | null } }[] | null;
  response_format?: { type: string; json_schema?: { schema?: Record<string, unknown> | null; strict?: boolean | null } } | null;
};

const UNCHECKED_KEYWORDS = new Set(["pattern", "patternProperties", "format"]);

/** The schema without the keywords this does not check (see above); a copy. */
function checkable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(checkable);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) if (!UNCHECKED_KEYWORDS.has(key)) out[key] = checkable(value);
  return out;
}

function satisfies(schema: Record<string, unknown> | null | undefined, value: unknown): boolean {
  if (!schema) return true;
  try {
    return new Validator(checkable(schema) as Schema, "2020-12", true).validate(value).valid;
  } catch {
    // A schema the validator cannot read is not the supplier's fault.
    return true;
  }
}

function parse(text: string): { ok: true; value: unknown } | { ok: false } {
  if (exceededJsonLimit(text, { maxDepth: env.MAX_JSON_DEPTH, maxValues: Number.POSITIVE_INFINITY })) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** The checks an answer is subject to, and their outcomes (none when the request constrained nothing). */
export function checkAnswer(request: AnswerConstraints, answer: UpstreamAnswer): AnswerCheck[] {
  const checks: AnswerCheck[] = [];
  const tools = new Map((request.tools ?? []).filter((t) => t.type === "function").map((t) => [t.function.name, t.function.parameters]));
  for (const call of answer.message.tool_calls ?? []) {
    const args = parse(call.function.arguments === "" ? "{}" : call.function.arguments);
    const result: AnswerCheckResult = !tools.has(call.function.name)
      ? "unknown_tool"
      : !args.ok
        ? "invalid_json"
        : satisfies(tools.get(call.function.name), args.value)
          ? "ok"
          : "schema_mismatch";
    checks.push({ kind: "tool_call", result });
  }
  const format = request.response_format;
  if (format?.type === "json_schema" && format.json_schema?.strict === true && !answer.message.tool_calls?.length) {
    const content = parse(answer.message.content ?? "");
    const result: AnswerCheckResult = !content.ok
      ? "invalid_json"
      : satisfies(format.json_schema.schema, content.value)
        ? "ok"
        : "schema_mismatch";
    checks.push({ kind: "json_schema", result });
  }
  return checks;
}
