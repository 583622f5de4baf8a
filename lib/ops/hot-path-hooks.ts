import "server-only";
import { metrics } from "@/lib/ops/metrics";
import { trackHold, untrackHold } from "@/lib/ops/request-context";

/**
 * What the completion hot path reports, in one line each (lib/router/holds.ts): the holds this process has open
 * (shutdown releases those of unfinished requests; the holds-in-flight gauge) and the counters of /metrics.
 */
export function onReserved(outcome: { status: string; holdId?: string | null; offerId?: string | null }): void {
  metrics.reservations.inc({ outcome: outcome.status });
  if (outcome.status === "ok" && outcome.holdId) trackHold(outcome.holdId, outcome.offerId ?? undefined);
}

export function onCleared(holdId: string, chargeMicros: bigint): void {
  untrackHold(holdId);
  metrics.clears.inc();
  metrics.clearedMicros.inc(Number(chargeMicros));
}

export function onReleased(holdId: string): void {
  untrackHold(holdId);
}
