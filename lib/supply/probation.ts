import "server-only";
import { db, type Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { platformFundsAvailable } from "@/lib/ledger/probe-payments";
import { utcDay } from "@/lib/supply/capacity";

/**
 * Probation (#37): posting an offer, or changing its upstream URL, key or models, puts it in probation: "verifying"
 * and off the book (offers.probe_delisted, which svc_offer_routable and svc_offer_on_book already read) until its first
 * probe set passes; lib/probes/probation.ts runs that set at once. When probes cannot run for it (the platform's probe
 * funds are empty, or today's PROBE_DAILY_BUDGET_MICROS is spent or zero) it is "unverified" and serves: the market
 * would otherwise stop taking new supply whenever the platform cannot pay, and buyers can see the difference.
 * PROBE_PROBATION=false: offers serve at once, unprobed, as before.
 */

export type ProbationColumns = {
  probeStatus: "verifying" | "unverified";
  probeDelisted: boolean;
  probeFlaggedAt: null;
  probeFlagReason: null;
  probeDueAt: null;
};

/** The probe columns a posted or changed offer starts with; null when probation is off. */
export async function probationColumns(tx: Tx | typeof db = db, now = new Date()): Promise<ProbationColumns | null> {
  if (!env.PROBE_PROBATION) return null;
  const [funds, day] = await Promise.all([
    platformFundsAvailable(tx as Tx),
    tx.probeDay.findUnique({ where: { day: utcDay(now) }, select: { committedMicros: true } }),
  ]);
  const budget = BigInt(env.PROBE_DAILY_BUDGET_MICROS);
  const canPay = funds > 0n && (day?.committedMicros ?? 0n) < budget;
  return {
    probeStatus: canPay ? "verifying" : "unverified",
    probeDelisted: canPay,
    probeFlaggedAt: null,
    probeFlagReason: null,
    probeDueAt: null,
  };
}
