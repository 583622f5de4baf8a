import { db, type Prisma, type Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { getOrCreateLedgerAccount } from "@/lib/ledger/accounts";
import { postEntry } from "@/lib/ledger/post-entry";
import { EXTERNAL_LEDGER_ACCOUNT_ID, PLATFORM_LEDGER_ACCOUNT_ID } from "@/lib/ledger/system-accounts";
import { ceilDiv, splitCharge } from "@/lib/money";
import { seedAccount } from "./factories";

/** Funds an account's buying balance as a top-up would (external → buyer), without a payment row. */
export async function seedBuyerBalance(ownerId: string, micros: bigint) {
  return db.$transaction(async (tx) => {
    const buyer = await getOrCreateLedgerAccount(tx, "buyer", ownerId);
    await postEntry(tx, {
      kind: "topup",
      lines: [
        { ledgerAccountId: EXTERNAL_LEDGER_ACCOUNT_ID, amountMicros: -micros },
        { ledgerAccountId: buyer.id, amountMicros: micros },
      ],
    });
    return buyer;
  });
}

/**
 * Gives a supplier exactly `micros` of earnings the way the market does: a fresh buyer is funded, then one
 * clear-shaped entry moves the charge from that buyer to the supplier (its share) and the platform (the fee).
 */
export async function seedSupplierEarnings(supplierId: string, micros: bigint) {
  const feeBps = BigInt(env.PLATFORM_FEE_BPS);
  const charge = ceilDiv(micros * 10_000n, 10_000n - feeBps);
  const { supplierMicros, feeMicros } = splitCharge(charge, env.PLATFORM_FEE_BPS);
  if (supplierMicros !== micros) throw new Error(`cannot make a charge whose supplier share is ${micros}`);

  const buyerAccount = await seedAccount();
  const buyer = await seedBuyerBalance(buyerAccount.id, charge);
  return db.$transaction(async (tx) => {
    const supplier = await getOrCreateLedgerAccount(tx, "supplier", supplierId);
    const lines = [
      { ledgerAccountId: buyer.id, amountMicros: -charge },
      { ledgerAccountId: supplier.id, amountMicros: supplierMicros },
    ];
    if (feeMicros > 0n) lines.push({ ledgerAccountId: PLATFORM_LEDGER_ACCOUNT_ID, amountMicros: feeMicros });
    await postEntry(tx, { kind: "clear", lines });
    return supplier;
  });
}

/**
 * A withdrawal as the debit leaves it: the row (with whatever else `data` says, e.g. a hash or a status) and its
 * `withdrawal` entry moving the amount from the supplier's earnings out of the ledger, in `tx`.
 */
export async function seedDebitedWithdrawal(
  tx: Tx,
  data: { accountId: string; toAddress: string; amountMicros: bigint } & Omit<
    Prisma.WithdrawalUncheckedCreateInput,
    "accountId" | "toAddress" | "amountMicros"
  >,
) {
  const earnings = await getOrCreateLedgerAccount(tx, "supplier", data.accountId);
  const withdrawal = await tx.withdrawal.create({ data });
  await postEntry(tx, {
    kind: "withdrawal",
    withdrawalId: withdrawal.id,
    lines: [
      { ledgerAccountId: earnings.id, amountMicros: -data.amountMicros },
      { ledgerAccountId: EXTERNAL_LEDGER_ACCOUNT_ID, amountMicros: data.amountMicros },
    ],
  });
  return withdrawal;
}

/**
 * Funds the platform's fee account (shard 0) as a real journal entry would (external → platform), e.g. for the
 * fidelity probes it pays for. Returns its balance after.
 */
export async function seedPlatformBalance(micros: bigint) {
  return db.$transaction(async (tx) => {
    await postEntry(tx, {
      kind: "topup",
      lines: [
        { ledgerAccountId: EXTERNAL_LEDGER_ACCOUNT_ID, amountMicros: -micros },
        { ledgerAccountId: PLATFORM_LEDGER_ACCOUNT_ID, amountMicros: micros },
      ],
    });
  });
}
