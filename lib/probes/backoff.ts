import "server-only";
import { env } from "@/lib/env";

/**
 * How long a flagged offer waits before it is probed again: PROBE_FLAGGED_BACKOFF_MS after the first round that
 * flags it, doubled for each further round in a row that flags it, at most PROBE_FLAGGED_BACKOFF_MAX_MS. A flagged
 * offer would otherwise be bought from every round, failing and being paid each time; a passing round resets the
 * streak, and a supplier who changes its upstream or models is due at the next round (lib/supply/update-offer.ts).
 * Null when backoff is off (PROBE_FLAGGED_BACKOFF_MS = 0): due every round.
 */
export function nextProbeDueAt(flaggedAt: Date, streakBefore: number): Date | null {
  const base = env.PROBE_FLAGGED_BACKOFF_MS;
  if (base === 0) return null;
  const wait = Math.min(base * 2 ** Math.min(streakBefore, 40), Math.max(env.PROBE_FLAGGED_BACKOFF_MAX_MS, base));
  return new Date(flaggedAt.getTime() + wait);
}
