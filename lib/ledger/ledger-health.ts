import { checkLedgerInvariants, type LedgerReport } from "@/lib/ledger/invariants";
import { log } from "@/lib/log";

export type LedgerHealth =
  | { ok: true; checkedAt: string }
  | { ok: false; checkedAt: string; violations: number }
  | { ok: false; checkedAt: string; error: "check_failed" };

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
      return { ok: false, checkedAt: new Date().toISOString(), error: "check_failed" };
    })
    .finally(() => {
      running = undefined;
    });
  return running;
}

export function summarizeLedgerReport(report: LedgerReport, checkedAt: Date): LedgerHealth {
  return report.ok
    ? { ok: true, checkedAt: checkedAt.toISOString() }
    : { ok: false, checkedAt: checkedAt.toISOString(), violations: report.violations.length };
}
