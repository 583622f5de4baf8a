import "server-only";
import { registerJob, startBackgroundJobs } from "@/lib/ops/jobs";
import { reconcilePayments } from "@/lib/payments/reconcile";
import { sweepExpiredHolds } from "@/lib/router/holds";
import { reconcileWithdrawals } from "@/lib/payments/withdrawals";

/** Every background job of a server instance; safe to run on every instance (each job is idempotent). */
export function startServerJobs(): void {
  registerJob("payment-reconcile", 30_000, () => reconcilePayments());
  registerJob("withdrawal-reconcile", 60_000, () => reconcileWithdrawals());
  registerJob("hold-sweeper", 15_000, () => sweepExpiredHolds());
  startBackgroundJobs();
}
