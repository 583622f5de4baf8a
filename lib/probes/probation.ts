import "server-only";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { log } from "@/lib/log";
import { processState } from "@/lib/process-state";
import { runProbeRound, type ProbeRoundReport } from "@/lib/probes/round";

/**
 * Probation's first probe set (#37; the state is lib/supply/probation.ts): when an offer is posted or its upstream, key
 * or models change, it is "verifying" and off the book, and its probe set is run at once for that offer alone, in the
 * background after the response (each probe within PROBE_PROBATION_SPREAD_MS), not at the next round. Then:
 * - every answer passes: passing, on the book (seconds after it was posted);
 * - a check fails: flagged, and it stays off the book whatever PROBE_DELIST_FLAGGED says (it never served);
 * - no probe could be paid (the platform's probe funds or today's budget) or fit its capacity: unverified, on the book;
 * - its upstream answered nothing (an outage): still verifying, off the book; the next round (and any further change
 *   to the offer) tries again.
 * One run per offer at a time in this process; a run that fails is logged, never thrown at the supplier.
 */

const running = processState("probation-runs", () => new Map<string, Promise<void>>());

export type ProbationOutcome = "passing" | "flagged" | "unverified" | "verifying";

/** Runs the probation probe set of a verifying offer now; what it ended as (null: it was not verifying). */
export async function runProbation(offerId: string, now: () => Date = () => new Date()): Promise<ProbationOutcome | null> {
  const offer = await db.offer.findUnique({ where: { id: offerId }, select: { probeStatus: true } });
  if (offer?.probeStatus !== "verifying") return null;
  const report = await runProbeRound({ offerIds: [offerId], spreadMs: env.PROBE_PROBATION_SPREAD_MS, now });
  if (report.passing.includes(offerId)) return "passing";
  if (report.flagged.includes(offerId)) return "flagged";
  if (report.offers > 0 && unpaid(report) && report.sent === 0) {
    const updated = await db.offer.updateMany({
      where: { id: offerId, probeStatus: "verifying" },
      data: { probeStatus: "unverified", probeDelisted: false },
    });
    if (updated.count > 0) {
      log.warn("offer serves unverified: its probation probes could not be paid", { offer: offerId, skipped: report.skipped });
      return "unverified";
    }
  }
  return "verifying";
}

function unpaid(report: ProbeRoundReport): boolean {
  return report.skipped.balance + report.skipped.budget + report.skipped.capacity > 0;
}

/** Starts an offer's probation run in the background (at most one per offer at a time); the promise never rejects. */
export function startProbation(offerId: string): Promise<void> {
  const existing = running.get(offerId);
  if (existing) return existing;
  const run = runProbation(offerId)
    .then((outcome) => log.info("offer probation finished", { offer: offerId, outcome }))
    .catch((error: unknown) => log.error("offer probation failed", { offer: offerId, error }))
    .finally(() => running.delete(offerId));
  running.set(offerId, run);
  return run;
}

/** After an offer is posted or changed: a verifying one gets its probe set now. Returns the view unchanged. */
export function afterOfferSaved<T extends { id: string; probe: { status: string } }>(view: T): T {
  if (view.probe.status === "verifying") void startProbation(view.id);
  return view;
}
