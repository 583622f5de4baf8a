import "server-only";
import { checkLedgerInvariants, type LedgerReport } from "@/lib/ledger/invariants";
import { log } from "@/lib/log";

import type { LedgerHealth } from "@/lib/ledger/schemas";

// The check scans every journal line; a public endpoint must not let callers trigger that at will.
const MAX_AGE_MS = 15_000;

let cached: { at: number; health: LedgerHealth } | undefined;
let running: Promise<LedgerHealth> | undefined;

/** The ledger invariants as a public health signal: pass/fail and a count, never accounts or amounts. */
export async function getLedgerHealth(options: { maxAgeMs?: number } = {}): Promise<LedgerHealth> {
  const maxAgeMs = options.maxAgeMs ?? MAX_AGE_MS;
  if (cached && Date.now() - cached.at < maxAgeMs) return cached.health;
  running ??= checkLedgerInvariants()
    .then((report) => {
      const health = summarizeLedgerReport(report, new Date());
      if (!health.ok) log.error("ledger invariants violated", { violations: report.violations });
      cached = { at: Date.now(), health };
      return health;
    })
    .catch((error: unknown): LedgerHealth => {
      log.error("ledger invariant check failed to run", { error });
      return { ok: false, checked_at: new Date().toISOString(), error: "check_failed" };
    })
    .finally(() => {
      running = undefined;
    });
  return running;
}

export function summarizeLedgerReport(report: LedgerReport, checkedAt: Date): LedgerHealth {
  return report.ok
    ? { ok: true, checked_at: checkedAt.toISOString() }
    : { ok: false, checked_at: checkedAt.toISOString(), violations: report.violations.length };
}
