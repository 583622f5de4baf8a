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

/**
 * Routing by answer checks (#37): an offer's error rate is its failed / checked tool calls and strict json_schema
 * answers over the window, once it has at least ANSWER_CHECK_MIN_CHECKED of them (else it has none). A model's median is
 * the median of the rates of its offers that have one. An offer stands "well above" a median m when its rate is at
 * least m + DEMOTE_MARGIN and at least DEMOTE_FACTOR × m: 10 points worse, and at least twice as bad. Such an offer is
 * demoted: a request that uses tools or a json_schema response format is routed to it only after every other offer
 * (whatever the sort), for every model it serves where it stands well above. `provider.sort: "quality"` orders by the
 * rate, lowest first (offers without one after those with). The refresh job (refresh.ts) writes both to the routing
 * snapshot.
 */
export const ANSWER_CHECK_MIN_CHECKED = 20;
export const DEMOTE_MARGIN = 0.1;
export const DEMOTE_FACTOR = 2;

/** The median of some rates (the mean of the middle two for an even count); null for none. */
export function median(rates: readonly number[]): number | null {
  if (rates.length === 0) return null;
  const sorted = [...rates].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Whether a rate stands well above a median (the rule above). */
export function wellAbove(rate: number, med: number): boolean {
  return rate >= med + DEMOTE_MARGIN && rate >= DEMOTE_FACTOR * med;
}

export type AnswerStanding = { errorRate: number | null; demoted: boolean };

/**
 * Every offer with answers checked in the window: its error rate (null below the minimum) and whether it is demoted,
 * against the medians of the models it serves (over active offers).
 */
export async function readAnswerStandings(now = new Date()): Promise<Map<string, AnswerStanding>> {
  const since = utcDayKey(new Date(now.getTime() - (CHECK_WINDOW_DAYS - 1) * 86_400_000));
  const rows = await db.$queryRaw<{ offer_id: string; checked: number; failed: number; models: string[] }[]>`
    WITH c AS (
      SELECT offer_id, SUM(checked)::int AS checked, SUM(invalid_json + unknown_tool + schema_mismatch)::int AS failed
      FROM offer_answer_checks WHERE day >= ${since}::date GROUP BY offer_id
    )
    SELECT c.offer_id::text, c.checked, c.failed,
           COALESCE((SELECT array_agg(om.model_id) FROM offer_models om JOIN offers o ON o.id = om.offer_id
                     WHERE om.offer_id = c.offer_id AND o.status = 'active'), '{}') AS models
    FROM c`;
  const rates = new Map<string, number | null>();
  const byModel = new Map<string, number[]>();
  for (const r of rows) {
    const rate = r.checked >= ANSWER_CHECK_MIN_CHECKED ? r.failed / r.checked : null;
    rates.set(r.offer_id, rate);
    if (rate === null) continue;
    for (const m of r.models) byModel.set(m, [...(byModel.get(m) ?? []), rate]);
  }
  const out = new Map<string, AnswerStanding>();
  for (const r of rows) {
    const rate = rates.get(r.offer_id)!;
    const demoted = rate !== null && r.models.some((m) => wellAbove(rate, median(byModel.get(m) ?? [])!));
    out.set(r.offer_id, { errorRate: rate === null ? null : Math.round(rate * 10_000) / 10_000, demoted });
  }
  return out;
}

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

export type OfferAnswerChecks = {
  window_days: number;
  tool_calls: AnswerCheckFigures;
  json_schema: AnswerCheckFigures;
  /** Both kinds' failed / checked, once at least ANSWER_CHECK_MIN_CHECKED were checked (what sort "quality" orders by). */
  error_rate: number | null;
  /** Routing's latest snapshot demotes it (its rate stands well above a model's median); set by the caller. */
  demoted: boolean;
};

const empty = (): AnswerCheckFigures => ({ checked: 0, failed: 0, invalid_json: 0, unknown_tool: 0, schema_mismatch: 0, error_rate: null });

/** Each offer's checks over the window, by id (an offer never checked has zeros and null rates). */
export async function readAnswerChecks(offerIds: string[], now = new Date()): Promise<Map<string, OfferAnswerChecks>> {
  const out = new Map<string, OfferAnswerChecks>();
  for (const id of offerIds)
    out.set(id, { window_days: CHECK_WINDOW_DAYS, tool_calls: empty(), json_schema: empty(), error_rate: null, demoted: false });
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
  for (const entry of out.values()) {
    const checked = entry.tool_calls.checked + entry.json_schema.checked;
    const failed = entry.tool_calls.failed + entry.json_schema.failed;
    if (checked >= ANSWER_CHECK_MIN_CHECKED) entry.error_rate = Math.round((failed / checked) * 10_000) / 10_000;
  }
  return out;
}
