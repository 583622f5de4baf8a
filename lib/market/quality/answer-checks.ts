import "server-only";
import { db } from "@/lib/db/client";
import { log } from "@/lib/log";
import { utcDayKey } from "@/lib/supply/capacity";
import type { AnswerCheck, AnswerCheckKind } from "@/lib/upstream/answer-checks";

/**
 * The offers' answer checks (lib/upstream/answer-checks.ts) counted per UTC day and published per offer: the counts
 * and the error rate of its tool calls and strict json_schema answers over the last CHECK_WINDOW_DAYS days.
 */

export const CHECK_WINDOW_DAYS = 7;

/** Counts one answer's checks on its offer's day; never throws (a lost count is logged, the answer was served). */
export async function recordAnswerChecks(offerId: string, checks: AnswerCheck[], now = new Date()): Promise<void> {
  if (checks.length === 0) return;
  const day = utcDayKey(now);
  const byKind = new Map<AnswerCheckKind, { checked: number; invalid_json: number; unknown_tool: number; schema_mismatch: number }>();
  for (const check of checks) {
    const counts = byKind.get(check.kind) ?? { checked: 0, invalid_json: 0, unknown_tool: 0, schema_mismatch: 0 };
    counts.checked += 1;
    if (check.result !== "ok") counts[check.result] += 1;
    byKind.set(check.kind, counts);
  }
  try {
    for (const [kind, c] of byKind) {
      await db.$executeRaw`
        INSERT INTO offer_answer_checks (offer_id, day, kind, checked, invalid_json, unknown_tool, schema_mismatch)
        VALUES (${offerId}::uuid, ${day}::date, ${kind}, ${c.checked}, ${c.invalid_json}, ${c.unknown_tool}, ${c.schema_mismatch})
        ON CONFLICT (offer_id, day, kind) DO UPDATE SET
          checked = offer_answer_checks.checked + EXCLUDED.checked,
          invalid_json = offer_answer_checks.invalid_json + EXCLUDED.invalid_json,
          unknown_tool = offer_answer_checks.unknown_tool + EXCLUDED.unknown_tool,
          schema_mismatch = offer_answer_checks.schema_mismatch + EXCLUDED.schema_mismatch`;
    }
  } catch (error) {
    log.warn("answer checks not recorded", { offerId, error });
  }
}

export type AnswerCheckFigures = {
  checked: number;
  failed: number;
  invalid_json: number;
  unknown_tool: number;
  schema_mismatch: number;
  /** failed / checked (4 decimals); null when nothing was checked. */
  error_rate: number | null;
};

export type OfferAnswerChecks = { window_days: number; tool_calls: AnswerCheckFigures; json_schema: AnswerCheckFigures };

const empty = (): AnswerCheckFigures => ({ checked: 0, failed: 0, invalid_json: 0, unknown_tool: 0, schema_mismatch: 0, error_rate: null });

/** Each offer's checks over the window, by id (an offer never checked has zeros and null rates). */
export async function readAnswerChecks(offerIds: string[], now = new Date()): Promise<Map<string, OfferAnswerChecks>> {
  const out = new Map<string, OfferAnswerChecks>();
  for (const id of offerIds) out.set(id, { window_days: CHECK_WINDOW_DAYS, tool_calls: empty(), json_schema: empty() });
  if (offerIds.length === 0) return out;
  const since = utcDayKey(new Date(now.getTime() - (CHECK_WINDOW_DAYS - 1) * 86_400_000));
  const rows = await db.$queryRaw<{ offer_id: string; kind: AnswerCheckKind; checked: number; ij: number; ut: number; sm: number }[]>`
    SELECT offer_id::text, kind, SUM(checked)::int AS checked, SUM(invalid_json)::int AS ij, SUM(unknown_tool)::int AS ut,
           SUM(schema_mismatch)::int AS sm
    FROM offer_answer_checks
    WHERE offer_id = ANY(${offerIds}::uuid[]) AND day >= ${since}::date
    GROUP BY offer_id, kind`;
  for (const r of rows) {
    const failed = r.ij + r.ut + r.sm;
    const figures: AnswerCheckFigures = {
      checked: r.checked,
      failed,
      invalid_json: r.ij,
      unknown_tool: r.ut,
      schema_mismatch: r.sm,
      error_rate: r.checked === 0 ? null : Math.round((failed / r.checked) * 10_000) / 10_000,
    };
    const entry = out.get(r.offer_id)!;
    if (r.kind === "tool_call") entry.tool_calls = figures;
    else entry.json_schema = figures;
  }
  return out;
}
