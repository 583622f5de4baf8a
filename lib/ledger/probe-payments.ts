import "server-only";
import { type Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { getOrCreateLedgerAccount } from "@/lib/ledger/accounts";
import { postEntry } from "@/lib/ledger/post-entry";
import { EXTERNAL_LEDGER_ACCOUNT_ID, PLATFORM_LEDGER_ACCOUNT_ID } from "@/lib/ledger/system-accounts";

/**
 * The platform buying from its own market (fidelity probes, lib/probes): the money side, as a completion's is the
 * reservation's and the clear's. Three operations, each inside the caller's transaction:
 *
 * - holdPlatformFunds: the most a probe can cost is held on the platform fee account (of the 16 shards,
 *   svc_platform_shard) with the most available, by one conditional update (available = balance - held).
 * - meterProbeCharge: what the answer costs against its hold, by the clear's own capped charge (svc_metered_charge:
 *   the burn at the snapshotted list prices capped at the burn held, its charge at the price held capped at the
 *   amount held) and split by svc_supplier_micros / svc_fee_micros. Pure: it moves nothing.
 * - payProbe / releasePlatformHold: the hold is released and, when paid, one `probe` journal entry moves the
 *   supplier's share from the holding platform account to the supplier's earnings (the fee is the platform's own:
 *   it stays).
 *
 * Lock order, as everywhere: ledger accounts last, in (kind, id) order (supplier before platform).
 */

/** The terms a probe was bought at, snapshotted when it was held (as a completion's hold snapshots them). */
export type ProbeTerms = {
  priceCents: number;
  inputMicroDiemPerMTok: bigint;
  outputMicroDiemPerMTok: bigint;
  maxBurnMicroDiem: bigint;
  maxChargeMicros: bigint;
};

export type ProbeCharge = { burnMicroDiem: bigint; chargeMicros: bigint; supplierMicros: bigint; feeMicros: bigint };

/**
 * The operator funds the probes: one `probe_funding` entry from external USDC to the platform's fee account (the one
 * of the first migration), which holdPlatformFunds then draws on. The USDC itself is the operator's to send to the
 * treasury (npm run probes -- --fund says so); on the dev stack the app funds it at start (lib/probes/funding.ts).
 */
export async function fundProbes(tx: Tx, amountMicros: bigint): Promise<{ entryId: string }> {
  if (amountMicros <= 0n) throw new Error("probe funding must be positive");
  return postEntry(tx, {
    kind: "probe_funding",
    lines: [
      { ledgerAccountId: EXTERNAL_LEDGER_ACCOUNT_ID, amountMicros: -amountMicros },
      { ledgerAccountId: PLATFORM_LEDGER_ACCOUNT_ID, amountMicros },
    ],
  });
}

/** Holds `amountMicros` on the platform fee account with the most available; its id, or null when none can hold it. */
export async function holdPlatformFunds(tx: Tx, amountMicros: bigint): Promise<string | null> {
  const held = await tx.$queryRaw<{ id: string }[]>`
    WITH pick AS (
      SELECT id FROM ledger_accounts
      WHERE kind = 'platform' AND balance_micros - held_micros >= ${amountMicros}::bigint
      ORDER BY balance_micros - held_micros DESC, id LIMIT 1
      FOR UPDATE
    )
    UPDATE ledger_accounts la SET held_micros = la.held_micros + ${amountMicros}::bigint
    FROM pick WHERE la.id = pick.id AND la.balance_micros - la.held_micros >= ${amountMicros}::bigint
    RETURNING la.id::text`;
  return held[0]?.id ?? null;
}

/** Gives a platform hold back. Throws when the account does not hold that much: every hold is released once. */
export async function releasePlatformHold(tx: Tx, platformAccountId: string, amountMicros: bigint): Promise<void> {
  const released = await tx.$executeRaw`
    UPDATE ledger_accounts SET held_micros = held_micros - ${amountMicros}::bigint
    WHERE id = ${platformAccountId}::uuid AND kind = 'platform' AND held_micros >= ${amountMicros}::bigint`;
  if (released !== 1) throw new Error(`probe hold of ${amountMicros} on platform account ${platformAccountId} is not held`);
}

/** What an answer billed at `billed` tokens costs under `terms` (see the top of this file). */
export async function meterProbeCharge(
  tx: Tx,
  terms: ProbeTerms,
  billed: { promptTokens: number; completionTokens: number },
): Promise<ProbeCharge> {
  const [row] = await tx.$queryRaw<{ burn: bigint; charge: bigint; share: bigint; fee: bigint }[]>`
    SELECT m.burn_micro_diem AS burn, m.charge_micros AS charge,
           svc_supplier_micros(m.charge_micros, ${env.PLATFORM_FEE_BPS}::integer) AS share,
           svc_fee_micros(m.charge_micros, ${env.PLATFORM_FEE_BPS}::integer) AS fee
    FROM svc_metered_charge(${billed.promptTokens}::bigint, 0::bigint, ${billed.completionTokens}::bigint,
                            ${terms.inputMicroDiemPerMTok}::bigint, NULL::bigint, ${terms.outputMicroDiemPerMTok}::bigint,
                            ${terms.priceCents}::integer, ${terms.maxBurnMicroDiem}::bigint, ${terms.maxChargeMicros}::bigint) m`;
  return {
    burnMicroDiem: BigInt(row.burn),
    chargeMicros: BigInt(row.charge),
    supplierMicros: BigInt(row.share),
    feeMicros: BigInt(row.fee),
  };
}

/**
 * Releases the probe's hold and pays the supplier its share from the holding platform account (one `probe` entry,
 * unique per probe run; none when the share rounds to 0).
 */
export async function payProbe(
  tx: Tx,
  input: { probeRunId: string; supplierId: string; platformAccountId: string; heldMicros: bigint; supplierMicros: bigint },
): Promise<void> {
  const supplier = await getOrCreateLedgerAccount(tx, "supplier", input.supplierId);
  await tx.$queryRaw`
    SELECT id FROM ledger_accounts WHERE id IN (${supplier.id}::uuid, ${input.platformAccountId}::uuid) ORDER BY kind, id FOR UPDATE`;
  await releasePlatformHold(tx, input.platformAccountId, input.heldMicros);
  if (input.supplierMicros <= 0n) return;
  await postEntry(tx, {
    kind: "probe",
    probeRunId: input.probeRunId,
    lines: [
      { ledgerAccountId: supplier.id, amountMicros: input.supplierMicros },
      { ledgerAccountId: input.platformAccountId, amountMicros: -input.supplierMicros },
    ],
  });
}

/** What the platform fee accounts can pay for probes now (balance less every hold), summed over the shards. */
export async function platformFundsAvailable(tx: Tx): Promise<bigint> {
  const [row] = await tx.$queryRaw<{ available: bigint | null }[]>`
    SELECT SUM(balance_micros - held_micros)::bigint AS available FROM ledger_accounts WHERE kind = 'platform'`;
  return BigInt(row?.available ?? 0n);
}
