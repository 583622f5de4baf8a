/**
 * The market the benchmarks run against: the catalog, one supplier's offer on `llama-3.3-70b` at 90¢ on the given
 * upstream, and a buyer with 1,000,000 USDC and an API key. Imports the app's modules when called, so the caller sets
 * DATABASE_URL and the other configuration first (lib/env.ts reads it once).
 */
export async function seedBenchWorld(upstream: {
  url: string;
  apiKey: string;
  dailyCapacityMicroDiem: bigint;
}): Promise<{ key: string; buyerId: string }> {
  const { db } = await import("../lib/db/client");
  const { seedCatalog } = await import("../prisma/seed");
  const { createApiKey } = await import("../lib/auth/api-keys");
  const { getOrCreateLedgerAccount } = await import("../lib/ledger/accounts");
  const { postEntry } = await import("../lib/ledger/post-entry");
  const { EXTERNAL_LEDGER_ACCOUNT_ID } = await import("../lib/ledger/system-accounts");
  const { encryptCredential } = await import("../lib/upstream/key-encryption");

  await seedCatalog(db);
  const supplier = await db.account.create({ data: { walletAddress: "0x000000000000000000000000000000000000bEEF" } });
  await db.offer.create({
    data: {
      supplierId: supplier.id,
      upstreamBaseUrl: upstream.url,
      upstreamKeyCiphertext: encryptCredential(upstream.apiKey),
      priceCents: 90,
      dailyCapacityMicroDiem: upstream.dailyCapacityMicroDiem,
      models: { create: [{ modelId: "llama-3.3-70b", upstreamModel: "llama-3.3-70b" }] },
    },
  });
  const buyer = await db.account.create({ data: { walletAddress: "0x000000000000000000000000000000000000cAFE" } });
  await db.$transaction(async (tx) => {
    const account = await getOrCreateLedgerAccount(tx, "buyer", buyer.id);
    await postEntry(tx, {
      kind: "topup",
      lines: [
        { ledgerAccountId: account.id, amountMicros: 1_000_000_000_000n },
        { ledgerAccountId: EXTERNAL_LEDGER_ACCOUNT_ID, amountMicros: -1_000_000_000_000n },
      ],
    });
  });
  const { key } = await createApiKey(buyer.id, {});
  return { key, buyerId: buyer.id };
}
