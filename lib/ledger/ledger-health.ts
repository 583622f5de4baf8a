import "server-only";
import { checkLedgerInvariants, type LedgerReport } from "@/lib/ledger/invariants";
import { log } from "@/lib/log";

import type { LedgerHealth } from "@/lib/ledger/schemas";

// The check scans every journal line; a public endpoint must not let callers trigger that at will.
const MAX_AGE_MS = 15_000;
/**
 * And it grows with the history: a check that took d ms is not run again for 20·d ms, so however large the ledger
 * and however often /healthz/ledger is asked, the check costs PostgreSQL at most about 5% of one core.
 */
const SPACING_FACTOR = 20;

let cached: { at: number; tookMs: number; health: LedgerHealth } | undefined;
let running: Promise<LedgerHealth> | undefined;

/** The ledger invariants as a public health signal: pass/fail and a count, never accounts or amounts. */
export async function getLedgerHealth(options: { maxAgeMs?: number } = {}): Promise<LedgerHealth> {
  const maxAgeMs = options.maxAgeMs ?? MAX_AGE_MS;
  if (cached && Date.now() - cached.at < Math.max(maxAgeMs, SPACING_FACTOR * cached.tookMs)) return cached.health;
  const started = Date.now();
  running ??= checkLedgerInvariants()
    .then((report) => {
      const health = summarizeLedgerReport(report, new Date());
      if (!health.ok) log.error("ledger invariants violated", { violations: report.violations });
      cached = { at: Date.now(), tookMs: Date.now() - started, health };
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
