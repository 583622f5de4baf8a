/**
 * The operator's probe command: `npm run probes -- [--model <id>]...` runs one fidelity probe round now (as the
 * background job does every PROBE_INTERVAL_MS), within today's PROBE_DAILY_BUDGET_MICROS, and prints what it found.
 */
import { parseArgs } from "node:util";
import { db } from "../lib/db/client";
import { runProbeRound } from "../lib/probes";
import { formatMicros } from "../lib/money";
import { runDbCommand } from "./db-command";

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { model: { type: "string", multiple: true }, help: { type: "boolean", short: "h" } } });
  if (values.help) {
    console.log("usage: npm run probes -- [--model <id>]...   (default: every model with live offers)");
    return 0;
  }
  const report = await runProbeRound({ modelIds: values.model });
  console.log(
    `round ${report.roundId}: ${report.offers} offers, ${report.sent} probes sent, ${formatMicros(report.chargedMicros)} USDC charged`,
  );
  const { budget, balance, capacity } = report.skipped;
  if (budget + balance + capacity > 0)
    console.log(
      `not sent: ${budget} over the day's budget, ${balance} beyond the platform's balance, ${capacity} beyond an offer's capacity`,
    );
  if (report.backingOff > 0) console.log(`backing off: ${report.backingOff} flagged offers not due yet (PROBE_FLAGGED_BACKOFF_MS)`);
  for (const id of report.flagged) {
    const offer = await db.offer.findUniqueOrThrow({ where: { id }, select: { probeFlagReason: true, probeDelisted: true } });
    console.log(`flagged ${id}${offer.probeDelisted ? " (delisted)" : ""}: ${offer.probeFlagReason}`);
  }
  console.log(`passing: ${report.passing.length}`);
  return report.flagged.length > 0 ? 3 : 0;
}

runDbCommand(main);
