import "server-only";
import type { Prisma } from "@prisma/client";
import { preferencesView, storedPreferences } from "@/lib/auth/api-keys";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import type { AccountProfile, BalanceView, UpdateAccountInput } from "@/lib/account/schemas";
import { getBalance } from "@/lib/ledger/accounts";
import { formatMicros } from "@/lib/money";
import { assertProviderIdsExist } from "@/lib/market/provider-ids";
import { AppError } from "@/lib/errors";
import { supplierPublicId } from "@/lib/supply/public-id";

/** The signed-in account: wallet, buyer balance (held = reserved by in-flight completions) and price defaults. */
export async function getAccountProfile(accountId: string): Promise<AccountProfile> {
  const [account, balance] = await Promise.all([
    db.account.findUniqueOrThrow({ where: { id: accountId } }),
    getBalance("buyer", accountId),
  ]);
  return {
    address: account.walletAddress,
    display_name: account.displayName,
    supplier_id: supplierPublicId(account.id),
    balance: formatMicros(balance.totalMicros),
    held: formatMicros(balance.heldMicros),
    available: formatMicros(balance.availableMicros),
    default_max_price_cents: account.defaultMaxPriceCents,
    platform_default_max_price_cents: env.DEFAULT_MAX_PRICE_CENTS,
    provider_preferences: preferencesView(account.providerPreferences),
  };
}

/** Only the fields sent change; null clears one. */
export async function updateAccountSettings(accountId: string, input: UpdateAccountInput): Promise<AccountProfile> {
  await assertProviderIdsExist(input.provider_preferences, "provider_preferences");
  const data: Prisma.AccountUpdateInput = {};
  if (input.default_max_price_cents !== undefined) data.defaultMaxPriceCents = input.default_max_price_cents;
  if (input.provider_preferences !== undefined) data.providerPreferences = storedPreferences(input.provider_preferences);
  if (input.display_name !== undefined) {
    data.displayName = input.display_name;
    data.displayNameKey = input.display_name?.toLowerCase() ?? null;
  }
  try {
    await db.account.update({ where: { id: accountId }, data });
  } catch (error) {
    // The unique display_name_key: another supplier has this name (in any case).
    if ((error as { code?: unknown }).code === "P2002")
      throw new AppError("conflict", `Another supplier is named "${input.display_name}"; choose another name.`, {
        details: { param: "display_name" },
      });
    throw error;
  }
  return getAccountProfile(accountId);
}

/** The prepaid buying balance: available to spend, held by in-flight requests, and their total. */
export async function getBuyerBalance(accountId: string): Promise<BalanceView> {
  const balance = await getBalance("buyer", accountId);
  return {
    available: formatMicros(balance.availableMicros),
    held: formatMicros(balance.heldMicros),
    total: formatMicros(balance.totalMicros),
  };
}
