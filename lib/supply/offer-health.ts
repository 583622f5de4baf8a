import "server-only";
import { metrics } from "@/lib/ops/metrics";
import type { OfferHealthView } from "@/lib/supply/schemas";
import { db } from "@/lib/db/client";
import { remainingMicroDiem, type CapacityUse } from "@/lib/supply/capacity";

/**
 * Offer health as a circuit breaker that no single buyer can trip. While cooling down an offer is not routable and
 * not on the book; after the cooldown the next request probes it.
 *
 * Evidence is the offer's current failure streak: the failures reported since its last served completion (a clear
 * resets it), ending when it has seen no failure for 10 minutes beyond its last cooldown. Failures the request
 * explains (lib/router/upstream-failure.ts) are never reported. The offer cools down when a failure arrives while
 * it is not already cooling and
 * - the failure is one no request can provoke (cause "upstream": unreachable, key refused, a forwarding loop; and
 *   every report that names no buyer), or
 * - the streak holds failures from at least 3 distinct buyer accounts, or
 * - the streak holds at least 5 failures over at least a minute: the offer served no one for a minute while every
 *   request failed. This is what protects the only buyer of a model from a dead upstream; with anyone else served
 *   meanwhile, their completion would have ended the streak, so a lone buyer cannot use it to push a busy offer off, or
 * - the streak has cooled down before (the probe after a cooldown failed).
 * The n-th cooldown of a streak lasts 30 s × 2^(n−1), capped at 15 min. A failure while cooling down (a request
 * that was in flight) counts in the streak but does not lengthen the cooldown.
 * Storage is bounded: the streak lives in the offer's row, with at most 3 buyer ids. Successes stay cheap: a clear
 * writes the offer only when a streak is open, or once a minute.
 */

export const BASE_COOLDOWN_MS = 30_000;
export const MAX_COOLDOWN_MS = 15 * 60_000;
/** Distinct buyers whose failures in one streak cool an offer down. */
export const DISTINCT_BUYERS_TO_COOL = 3;
/** A streak of this many failures over at least LONE_STREAK_MS cools an offer down whoever sent them. */
export const LONE_STREAK_FAILURES = 5;
export const LONE_STREAK_MS = 60_000;
/** A streak ends when it has seen no failure for this long (after its cooldown, if any). */
export const STREAK_WINDOW_MS = 10 * 60_000;
const MAX_REASON_CHARS = 200;

/** The n-th cooldown of a streak (n ≥ 1). */
export function cooldownMs(cooldowns: number): number {
  const n = Math.max(1, Math.min(cooldowns, 32));
  return Math.min(BASE_COOLDOWN_MS * 2 ** (n - 1), MAX_COOLDOWN_MS);
}

/** Not cooling down at `now`: the mirror of prisma/functions/svc_offer_healthy.sql (tests/integration/money-rules.test.ts). */
export function isHealthy(offer: { unhealthyUntil: Date | null }, now: Date = new Date()): boolean {
  return offer.unhealthyUntil === null || offer.unhealthyUntil.getTime() <= now.getTime();
}

/**
 * On the book at `now`: active, healthy, not delisted by a failed fidelity probe, with capacity left today. The mirror of
 * prisma/functions/svc_offer_on_book.sql for an offer's own view (tests/integration/money-rules.test.ts compares the two).
 */
export function isOnBook(
  offer: { status: string; unhealthyUntil: Date | null; probeDelisted: boolean },
  use: CapacityUse,
  now: Date = new Date(),
): boolean {
  return offer.status === "active" && isHealthy(offer, now) && !offer.probeDelisted && remainingMicroDiem(use) > 0n;
}

/**
 * `upstream`: no request can provoke it, so it cools the offer down at once; `answer`: the upstream failed a request
 * in a way a request might provoke, so it is weighed across buyers.
 */
export type FailureCause = "upstream" | "answer";

export type FailureReport = {
  /** The buyer whose request failed. */
  accountId?: string | null;
  /** Defaults to "answer" when a buyer is named, else "upstream". */
  cause?: FailureCause;
  /**
   * The failure ended a forward of real traffic (lib/router/complete.ts forwardOnce): it is also measured, as a forward
   * the offer did not answer (offer_stats, lib/market/quality), in the same statement, when svc_offer_stats_counted
   * measures it (a buyer's, not the supplier's own, within the buyer's hourly share). Not set by a report about an
   * answer that was billed (a claim out of bounds): that forward was answered.
   */
  forward?: boolean;
  now?: Date;
};

/**
 * Records a failure of the offer's upstream. `reason` is shown to the offer's supplier: pass a short description,
 * never upstream bodies or credentials. Called with two arguments it is a failure no buyer provoked (it cools the
 * offer down at once, as a refused key does). One atomic statement (the offer's row is locked while the streak is
 * read and written, and a forward's failure is measured in it too), so concurrent failures count correctly. Returns
 * null for an unknown offer.
 */
export async function reportUpstreamFailure(
  offerId: string,
  reason: string,
  report: FailureReport = {},
): Promise<{ consecutiveFailures: number; unhealthyUntil: Date | null; cooledDown: boolean } | null> {
  const now = report.now ?? new Date();
  const accountId = report.accountId ?? null;
  const cause: FailureCause = report.cause ?? (accountId ? "answer" : "upstream");
  const forward = report.forward === true;
  metrics.upstreamFailures.inc({ offer: offerId });
  const cleanReason =
    reason
      .replace(/[\r\n\t]+/g, " ")
      .trim()
      .slice(0, MAX_REASON_CHARS) || "upstream failure";
  // The cooldown's exponent is capped before power() so a long streak cannot overflow.
  const rows = await db.$queryRaw<{ consecutive_failures: number; unhealthy_until: Date | null; cooled: boolean }[]>`
    WITH cur AS MATERIALIZED (
      SELECT o."id", o."unhealthy_until", o."consecutive_failures", o."failure_streak_started_at",
             o."failure_streak_buyers", o."failure_streak_cooldowns",
             (o."consecutive_failures" = 0 OR o."failure_streak_started_at" IS NULL OR o."last_failure_at" IS NULL
              OR GREATEST(o."last_failure_at", o."unhealthy_until")
                 < ${now}::timestamptz - ${STREAK_WINDOW_MS}::bigint * interval '1 millisecond') AS fresh
      FROM "offers" o
      WHERE o."id" = ${offerId}::uuid
      FOR NO KEY UPDATE OF o
    ), streak AS (
      SELECT c."id", c."unhealthy_until",
             CASE WHEN c.fresh THEN 1 ELSE c."consecutive_failures" + 1 END AS failures,
             CASE WHEN c.fresh THEN ${now}::timestamptz ELSE c."failure_streak_started_at" END AS started,
             CASE WHEN c.fresh THEN 0 ELSE c."failure_streak_cooldowns" END AS cooldowns,
             CASE WHEN ${accountId}::uuid IS NULL THEN CASE WHEN c.fresh THEN '{}'::uuid[] ELSE c."failure_streak_buyers" END
                  WHEN c.fresh THEN ARRAY[${accountId}::uuid]
                  WHEN ${accountId}::uuid = ANY(c."failure_streak_buyers")
                       OR cardinality(c."failure_streak_buyers") >= ${DISTINCT_BUYERS_TO_COOL}::int THEN c."failure_streak_buyers"
                  ELSE c."failure_streak_buyers" || ${accountId}::uuid END AS buyers
      FROM cur c
    ), decided AS (
      SELECT s.*,
             svc_offer_healthy(s."unhealthy_until", ${now}::timestamptz)
             AND (${cause}::text = 'upstream'
                  OR cardinality(s.buyers) >= ${DISTINCT_BUYERS_TO_COOL}::int
                  OR s.cooldowns > 0
                  OR (s.failures >= ${LONE_STREAK_FAILURES}::int
                      AND s.started <= ${now}::timestamptz - ${LONE_STREAK_MS}::bigint * interval '1 millisecond')) AS cool
      FROM streak s
    ), measured AS (
      -- After the offer's row (cur locks it): the clear, too, locks offers before offer_stats.
      INSERT INTO "offer_stats" AS s ("offer_id", "bucket", "forwards")
      SELECT d."id", svc_offer_stats_bucket(${now}::timestamptz), 1 FROM decided d
      WHERE CASE WHEN ${forward}::boolean
                 THEN (svc_offer_stats_counted(ARRAY[d."id"], ARRAY[${accountId}::uuid], ${now}::timestamptz))[1] ELSE false END
      ON CONFLICT ("offer_id", "bucket") DO UPDATE SET "forwards" = s."forwards" + 1
    )
    UPDATE "offers" o SET
      "consecutive_failures" = d.failures,
      "failure_streak_started_at" = d.started,
      "failure_streak_buyers" = d.buyers,
      "failure_streak_cooldowns" = d.cooldowns + CASE WHEN d.cool THEN 1 ELSE 0 END,
      "unhealthy_until" = CASE WHEN d.cool
        THEN ${now}::timestamptz + LEAST(
          ${BASE_COOLDOWN_MS}::bigint * power(2, LEAST(d.cooldowns, 10))::bigint, ${MAX_COOLDOWN_MS}::bigint
        ) * interval '1 millisecond'
        ELSE o."unhealthy_until" END,
      "last_failure_at" = ${now}::timestamptz,
      "last_failure_reason" = ${cleanReason}
    FROM decided d
    WHERE o."id" = d."id"
    RETURNING o."consecutive_failures", o."unhealthy_until", d.cool AS cooled`;
  const row = rows[0];
  if (!row) return null;
  return {
    consecutiveFailures: row.consecutive_failures,
    unhealthyUntil: row.unhealthy_until === null ? null : new Date(row.unhealthy_until),
    cooledDown: row.cooled,
  };
}

/**
 * Records a successful forward: clears the failure streak and any cooldown, by the rule the clear applies to the offers
 * it served (svc_record_offer_success: an offer already healthy refreshes last_success_at at most once a minute).
 */
export async function reportUpstreamSuccess(offerId: string, now: Date = new Date()): Promise<void> {
  await db.$executeRaw`SELECT svc_record_offer_success(ARRAY[${offerId}::uuid], ${now}::timestamptz)`;
}

/** Disputes are counted over the last 30 UTC days (today included). */
export const DISPUTE_WINDOW_DAYS = 30;

export function disputeWindowStart(now: Date): Date {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(today - (DISPUTE_WINDOW_DAYS - 1) * 86_400_000);
}

/** How often the offer's claimed usage exceeded our own count beyond the tolerance, and so was billed at ours. */
export type DisputeView = OfferHealthView["disputes"];

export function disputeView(days: readonly { clears: number; disputedClears: number }[]): DisputeView {
  const clears = days.reduce((n, d) => n + d.clears, 0);
  const disputed = days.reduce((n, d) => n + d.disputedClears, 0);
  return { window_days: DISPUTE_WINDOW_DAYS, clears, disputed, dispute_rate: disputeRate(clears, disputed) };
}

/** disputed / clears, rounded to 4 decimals; null without clears. */
export function disputeRate(clears: number, disputed: number): number | null {
  return clears > 0 ? Math.round((disputed / clears) * 10_000) / 10_000 : null;
}

export function healthView(
  offer: {
    unhealthyUntil: Date | null;
    consecutiveFailures: number;
    lastFailureAt: Date | null;
    lastFailureReason: string | null;
    lastSuccessAt: Date | null;
  },
  now: Date = new Date(),
  /** The offer's days within the dispute window. */
  days: readonly { clears: number; disputedClears: number }[] = [],
): OfferHealthView {
  const healthy = isHealthy(offer, now);
  return {
    status: healthy ? "healthy" : "cooling_down",
    cooldown_until: healthy ? null : offer.unhealthyUntil!.toISOString(),
    consecutive_failures: offer.consecutiveFailures,
    last_failure_at: offer.lastFailureAt?.toISOString() ?? null,
    last_failure_reason: offer.lastFailureReason,
    last_success_at: offer.lastSuccessAt?.toISOString() ?? null,
    disputes: disputeView(days),
  };
}
