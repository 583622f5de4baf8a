import "server-only";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { log } from "@/lib/log";
import { fundProbes, platformFundsAvailable } from "@/lib/ledger/probe-payments";

/**
 * Funding the platform's probe account (the ledger's `probe_funding` entry, lib/ledger/probe-payments.ts): by the
 * operator (`npm run probes -- --fund <usdc>`), and on the development stack by the app itself before its first probe
 * round, up to PROBE_DEV_FUNDS_MICROS, so a fresh `npm run dev` probes its demo offers and puts new ones in probation.
 */

/** Funds the probes with `amountMicros`; what the platform's fee accounts can pay probes with afterwards. */
export async function fundPlatformProbes(amountMicros: bigint): Promise<bigint> {
  return db.$transaction(async (tx) => {
    await fundProbes(tx, amountMicros);
    return platformFundsAvailable(tx);
  });
}

/** Development only: tops the probe funds up to PROBE_DEV_FUNDS_MICROS when they are below it (no-op elsewhere). */
export async function ensureDevProbeFunds(): Promise<void> {
  if (env.SVC_ENV !== "development" || env.PROBE_DEV_FUNDS_MICROS === 0) return;
  const target = BigInt(env.PROBE_DEV_FUNDS_MICROS);
  const available = await platformFundsAvailable(db);
  if (available >= target) return;
  await fundPlatformProbes(target - available);
  log.info("dev stack: probe funds topped up", { funded_micros: target - available });
}
