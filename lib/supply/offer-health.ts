import "server-only";
import { metrics } from "@/lib/ops/metrics";
import type { OfferHealthView } from "@/lib/supply/schemas";
import { db } from "@/lib/db";

/**
 * Offer health as a circuit breaker. Each upstream failure the router reports puts the offer in a
 * cooldown of 30 s × 2^(n−1) for the n-th consecutive failure, capped at 15 min; while cooling down
 * the offer is not routable and not on the book. After the cooldown the next request probes it
 * (success clears the streak; another failure doubles the cooldown).
 */

export const BASE_COOLDOWN_MS = 30_000;
export const MAX_COOLDOWN_MS = 15 * 60_000;
const MAX_REASON_CHARS = 200;
/** Successes of an already healthy offer refresh last_success_at at most this often (one write per minute, not per request). */
const SUCCESS_REFRESH_MS = 60_000;

/** Cooldown after the n-th consecutive failure (n ≥ 1). */
export function cooldownMs(consecutiveFailures: number): number {
  const n = Math.max(1, Math.min(consecutiveFailures, 32));
  return Math.min(BASE_COOLDOWN_MS * 2 ** (n - 1), MAX_COOLDOWN_MS);
}

export function isHealthy(offer: { unhealthyUntil: Date | null }, now: Date = new Date()): boolean {
  return offer.unhealthyUntil === null || offer.unhealthyUntil.getTime() <= now.getTime();
}

/**
 * Records a failed forward (timeout, 5xx, unusable body, refused key…). `reason` is shown to the
 * offer's supplier: pass a short description, never upstream bodies or credentials.
 * One atomic statement, so concurrent failures count correctly. Returns null for an unknown offer.
 */
export async function reportUpstreamFailure(
  offerId: string,
  reason: string,
  now: Date = new Date(),
): Promise<{ consecutiveFailures: number; unhealthyUntil: Date } | null> {
  metrics.upstreamFailures.inc({ offer: offerId });
  const cleanReason = reason.replace(/[\r\n\t]+/g, " ").trim().slice(0, MAX_REASON_CHARS) || "upstream failure";
  // In SET, consecutive_failures is the old value n−1, so the cooldown is 30 s × 2^(n−1); the exponent is
  // capped before power() so a long streak cannot overflow.
  const rows = await db.$queryRaw<{ consecutive_failures: number; unhealthy_until: Date }[]>`
    UPDATE offers SET
      consecutive_failures = consecutive_failures + 1,
      unhealthy_until = ${now}::timestamptz + LEAST(
        ${BASE_COOLDOWN_MS}::bigint * power(2, LEAST(consecutive_failures, 10))::bigint, ${MAX_COOLDOWN_MS}::bigint
      ) * interval '1 millisecond',
      last_failure_at = ${now}::timestamptz,
      last_failure_reason = ${cleanReason}
    WHERE id = ${offerId}::uuid
    RETURNING consecutive_failures, unhealthy_until`;
  const row = rows[0];
  return row ? { consecutiveFailures: row.consecutive_failures, unhealthyUntil: new Date(row.unhealthy_until) } : null;
}

/** Records a successful forward: clears the failure streak and any cooldown. Cheap when already healthy. */
export async function reportUpstreamSuccess(offerId: string, now: Date = new Date()): Promise<void> {
  const staleBefore = new Date(now.getTime() - SUCCESS_REFRESH_MS);
  await db.$executeRaw`
    UPDATE offers SET consecutive_failures = 0, unhealthy_until = NULL, last_success_at = ${now}::timestamptz
    WHERE id = ${offerId}::uuid
      AND (consecutive_failures > 0 OR unhealthy_until IS NOT NULL OR last_success_at IS NULL
           OR last_success_at < ${staleBefore}::timestamptz)`;
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
