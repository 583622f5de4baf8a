import "server-only";
import { pruneRefusals } from "@/lib/account/refusals";
import { env } from "@/lib/env";
import { refreshOfferQuality } from "@/lib/market/quality/refresh";
import { runProbeRound } from "@/lib/probes";
import { ensureDevProbeFunds } from "@/lib/probes/funding";
import { registerJob, startBackgroundJobs } from "@/lib/ops/jobs";
import { reconcilePayments } from "@/lib/payments/reconcile";
import { sweepExpiredHolds } from "@/lib/router/holds";
import { sweepExpiredPromptPrefixes } from "@/lib/router/prompt-prefixes";
import { reconcileWithdrawals } from "@/lib/payments/withdrawals";

/**
 * Every background job of a server instance. Each is idempotent, and each tick runs on one instance of the fleet
 * only (a lease in job_leases), so N instances do the work of one. JOBS_INTERVAL_MS overrides every interval (tests).
 */
export function startServerJobs(): void {
  const every = (ms: number) => env.JOBS_INTERVAL_MS ?? ms;
  registerJob("payment-reconcile", every(30_000), () => reconcilePayments(), { leased: true });
  registerJob("withdrawal-reconcile", every(60_000), () => reconcileWithdrawals(), { leased: true });
  registerJob("hold-sweeper", every(15_000), () => sweepExpiredHolds(), { leased: true });
  registerJob("prompt-prefix-sweeper", every(60_000), () => sweepExpiredPromptPrefixes(), { leased: true });
  registerJob("refusal-prune", every(3_600_000), () => pruneRefusals(), { leased: true });
  registerJob("offer-quality", every(env.QUALITY_REFRESH_MS), () => refreshOfferQuality(), { leased: true });
  // Probes cost money: their own interval only (JOBS_INTERVAL_MS would make a test fleet buy a round every tick).
  // The dev stack funds the probes before its first round (a no-op elsewhere: the operator funds them).
  if (env.PROBE_INTERVAL_MS > 0) {
    const round = async () => {
      await ensureDevProbeFunds();
      return runProbeRound();
    };
    registerJob("probe-round", env.PROBE_INTERVAL_MS, round, { leased: true });
  }
  startBackgroundJobs();
}
