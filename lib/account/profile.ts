import { z } from "zod";
import { db } from "@/lib/db";
import { env } from "@/lib/env";
import { formatMicros } from "@/lib/money";

export const UpdateAccountBody = z.strictObject({
  /** Cents per diem the account pays at most when neither request nor key says; null = the platform default. */
  defaultMaxPriceCents: z.number().int().min(1).max(10_000).nullable(),
});

export type UpdateAccountInput = z.infer<typeof UpdateAccountBody>;

export type AccountProfile = {
  address: string;
  balance: string;
  held: string;
  available: string;
  defaultMaxPriceCents: number | null;
  platformDefaultMaxPriceCents: number;
};

/** The signed-in account: wallet, buyer balance (held = reserved by in-flight completions) and price defaults. */
export async function getAccountProfile(accountId: string): Promise<AccountProfile> {
  const [account, ledger] = await Promise.all([
    db.account.findUniqueOrThrow({ where: { id: accountId } }),
    db.ledgerAccount.findFirst({ where: { kind: "buyer", ownerId: accountId } }),
  ]);
  const balanceMicros = ledger?.balanceMicros ?? 0n;
  const heldMicros = ledger?.heldMicros ?? 0n;
  return {
    address: account.walletAddress,
    balance: formatMicros(balanceMicros),
    held: formatMicros(heldMicros),
    available: formatMicros(balanceMicros - heldMicros),
    defaultMaxPriceCents: account.defaultMaxPriceCents,
    platformDefaultMaxPriceCents: env.DEFAULT_MAX_PRICE_CENTS,
  };
}

export async function updateAccountSettings(accountId: string, input: UpdateAccountInput): Promise<AccountProfile> {
  await db.account.update({ where: { id: accountId }, data: { defaultMaxPriceCents: input.defaultMaxPriceCents } });
  return getAccountProfile(accountId);
}
