/**
 * The operator's probe command: `npm run probes -- [--model <id>]...` runs one fidelity probe round now (as the
 * background job does every PROBE_INTERVAL_MS), within today's PROBE_DAILY_BUDGET_MICROS, and prints what it found.
 * `npm run probes -- --fund <usdc>` funds the platform's probe account instead (a `probe_funding` ledger entry; send
 * the same USDC to the treasury), and prints what probes can now spend (svc_probe_funds_available_usdc_micros).
 */
import { parseArgs } from "node:util";
import { db } from "../lib/db/client";
import { runProbeRound } from "../lib/probes";
import { formatMicros, parseMicros } from "../lib/money";
import { env } from "../lib/env";
import { fundPlatformProbes } from "../lib/probes/funding";
import { runDbCommand } from "./db-command";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { model: { type: "string", multiple: true }, fund: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.log("usage: npm run probes -- [--model <id>]...   (default: every model with live offers)");
    console.log("       npm run probes -- --fund <usdc>        (fund the platform's probe account, e.g. --fund 10.00)");
    return 0;
  }
  if (values.fund !== undefined) {
    const micros = parseMicros(values.fund);
    if (micros === null || micros <= 0n) {
      console.error(`--fund takes a positive USDC amount with at most 6 decimals, e.g. 10.00 (got ${values.fund})`);
      return 2;
    }
    const available = await fundPlatformProbes(micros);
    console.log(`funded the probes with ${formatMicros(micros)} USDC; they can now spend ${formatMicros(available)} USDC`);
    console.log(`send the same USDC to the treasury, ${env.TREASURY_ADDRESS}, if you have not: the ledger now counts it`);
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
