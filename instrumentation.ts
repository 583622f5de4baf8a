/**
 * Next.js calls `register()` once when a server instance starts. Background jobs run only in the Node.js runtime
 * (they need the database and the chain); register more with `registerJob` before `startBackgroundJobs()`.
 */
export async function register() {
  const { env } = await import("@/lib/env");
  if (env.NEXT_RUNTIME !== "nodejs") return;

  const { registerJob, startBackgroundJobs } = await import("@/lib/ops/jobs");
  const { reconcilePayments } = await import("@/lib/payments/reconcile");
  const { reconcileWithdrawals } = await import("@/lib/supply/withdrawals");
  const { sweepExpiredHolds } = await import("@/lib/router/holds");

  registerJob("payment-reconcile", 30_000, () => reconcilePayments());
  registerJob("withdrawal-reconcile", 60_000, () => reconcileWithdrawals());
  registerJob("hold-sweeper", 15_000, () => sweepExpiredHolds());
  startBackgroundJobs();
}
