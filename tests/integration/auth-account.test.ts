import { describe, expect, it } from "vitest";
import { GET as getAccount, PATCH as patchAccount } from "@/app/v1/account/route";
import { GET as offersRoute } from "@/app/v1/market/models/[id]/offers/route";
import { clearMarketCache } from "@/lib/market/cache";
import type { ModelOfferList } from "@/lib/market/schemas";
import { supplierPublicId } from "@/lib/supply/public-id";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { EXTERNAL_LEDGER_ACCOUNT_ID } from "@/lib/ledger/system-accounts";
import { encryptCredential } from "@/lib/upstream/key-encryption";
import { jsonRequest, readError, routeParams } from "../helpers/http";
import { seedAccount, seedSignedInAccount } from "../helpers/factories";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";

function readAccount(cookie: string) {
  return getAccount(jsonRequest("GET", "/v1/account", undefined, { cookie }));
}

function patch(cookie: string, body: unknown, headers: Record<string, string> = {}) {
  return patchAccount(jsonRequest("PATCH", "/v1/account", body, { cookie, ...headers }));
}

/** A balanced top-up journal entry (external -> buyer), as the top-up flow writes one. */
async function creditBuyer(accountId: string, micros: bigint) {
  return db.$transaction(async (tx) => {
    const buyer = await tx.ledgerAccount.create({ data: { kind: "buyer", ownerId: accountId, balanceMicros: micros } });
    await tx.ledgerAccount.update({ where: { id: EXTERNAL_LEDGER_ACCOUNT_ID }, data: { balanceMicros: { decrement: micros } } });
    await tx.journalEntry.create({
      data: {
        kind: "topup",
        lines: {
          create: [
            { ledgerAccountId: buyer.id, amountMicros: micros },
            { ledgerAccountId: EXTERNAL_LEDGER_ACCOUNT_ID, amountMicros: -micros },
          ],
        },
      },
    });
    return buyer;
  });
}

/**
 * An active hold of `micros` on the buyer, as an in-flight completion leaves one. The offer is withdrawn
 * and serves no model, so no other test's router or market can see it.
 */
async function holdFromBuyer(accountId: string, ledgerAccountId: string, micros: bigint) {
  const supplier = await seedAccount();
  const day = new Date(new Date().toISOString().slice(0, 10));
  const burnMicroDiem = 1_000n;
  const offer = await db.offer.create({
    data: {
      supplierId: supplier.id,
      upstreamBaseUrl: "http://127.0.0.1:9/v1",
      upstreamKeyCiphertext: encryptCredential("k"),
      priceCents: 100,
      dailyCapacityMicroDiem: 1_000_000n,
      status: "withdrawn",
    },
  });
  const apiKey = await db.apiKey.create({ data: { accountId, name: "hold", prefix: "svc_hold", keyHash: `hold-${offer.id}` } });
  return db.$transaction(async (tx) => {
    await tx.offerDay.create({ data: { offerId: offer.id, day, heldMicroDiem: burnMicroDiem } });
    await tx.ledgerAccount.update({ where: { id: ledgerAccountId }, data: { heldMicros: { increment: micros } } });
    return tx.hold.create({
      data: {
        accountId,
        apiKeyId: apiKey.id,
        offerId: offer.id,
        modelId: "llama-3.3-70b",
        day,
        priceCents: 100,
        amountMicros: micros,
        burnMicroDiem,
        expiresAt: new Date(Date.now() + 3_600_000),
      },
    });
  });
}

describe("GET /v1/account", () => {
  it("shows a new account's wallet, zero balances and the price defaults", async () => {
    const buyer = await seedSignedInAccount();
    const res = await readAccount(buyer.cookie);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      address: buyer.walletAddress,
      display_name: null,
      supplier_id: supplierPublicId(buyer.id),
      balance: "0.000000",
      held: "0.000000",
      available: "0.000000",
      default_max_price_cents: null,
      platform_default_max_price_cents: env.DEFAULT_MAX_PRICE_CENTS,
      provider_preferences: null,
    });
  });

  it("shows the buyer ledger: balance, what in-flight completions hold, and what is available", async () => {
    const buyer = await seedSignedInAccount();
    const ledger = await creditBuyer(buyer.id, 12_500_000n);
    const hold = await holdFromBuyer(buyer.id, ledger.id, 2_000_001n);
    try {
      const body = await (await readAccount(buyer.cookie)).json();
      expect(body).toMatchObject({ balance: "12.500000", held: "2.000001", available: "10.499999" });
    } finally {
      await db.$transaction([
        db.hold.update({ where: { id: hold.id }, data: { status: "released", settledAt: new Date() } }),
        db.ledgerAccount.update({ where: { id: ledger.id }, data: { heldMicros: { decrement: hold.amountMicros } } }),
        db.offerDay.update({
          where: { offerId_day: { offerId: hold.offerId, day: hold.day } },
          data: { heldMicroDiem: { decrement: hold.burnMicroDiem } },
        }),
      ]);
    }
  });

  it("shows only the caller's own account", async () => {
    const a = await seedSignedInAccount();
    const b = await seedSignedInAccount();
    expect((await (await readAccount(a.cookie)).json()).address).toBe(a.walletAddress);
    expect((await (await readAccount(b.cookie)).json()).address).toBe(b.walletAddress);
  });
});

describe("PATCH /v1/account display_name: a supplier's name", () => {
  it("is shown beside the public id in the offers API, unique case-insensitively, validated, and cleared by null", async () => {
    const supplier = await seedSignedInAccount();
    const model = await seedPrivateModel();
    const offer = await seedOffer({ supplierId: supplier.id, models: [model.id], priceCents: 60, dailyCapacityMicroDiem: 5_000_000n });
    const name = `Acme Inference ${Date.now().toString(36)}`;
    const set = await patch(supplier.cookie, { display_name: `  ${name} ` });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ display_name: name, supplier_id: supplierPublicId(supplier.id) });

    clearMarketCache();
    const listed = await offersRoute(jsonRequest("GET", `/v1/market/models/${model.id}/offers`), routeParams({ id: model.id }));
    const shown = ((await listed.json()) as ModelOfferList).data.find((o) => o.id === offer.id)!;
    expect(shown).toMatchObject({ supplier: supplierPublicId(supplier.id), supplier_name: name });

    const other = await seedSignedInAccount();
    const taken = await patch(other.cookie, { display_name: name.toUpperCase() });
    expect(taken.status).toBe(409);
    expect(await readError(taken)).toMatchObject({ code: "conflict" });
    expect((await db.account.findUniqueOrThrow({ where: { id: other.id } })).displayName).toBeNull();
    for (const bad of ["ab", "sup_0123456789abcdef01234567", "-dash first", "two  spaces", "x".repeat(41), "emoji 🙂"]) {
      const res = await patch(other.cookie, { display_name: bad });
      expect(res.status, bad).toBe(400);
    }

    const cleared = await patch(supplier.cookie, { display_name: null });
    expect((await cleared.json()).display_name).toBeNull();
    // Released: another supplier may take it now.
    expect((await patch(other.cookie, { display_name: name })).status).toBe(200);
  });
});

describe("PATCH /v1/account", () => {
  it("sets and clears the default max price", async () => {
    const buyer = await seedSignedInAccount();
    const set = await patch(buyer.cookie, { default_max_price_cents: 250 });
    expect(set.status).toBe(200);
    expect(await set.json()).toMatchObject({ address: buyer.walletAddress, default_max_price_cents: 250 });
    expect((await db.account.findUniqueOrThrow({ where: { id: buyer.id } })).defaultMaxPriceCents).toBe(250);

    const cleared = await patch(buyer.cookie, { default_max_price_cents: null });
    expect((await cleared.json()).default_max_price_cents).toBeNull();
    expect((await db.account.findUniqueOrThrow({ where: { id: buyer.id } })).defaultMaxPriceCents).toBeNull();
  });

  it.each([
    ["0", { default_max_price_cents: 0 }, "invalid_request"],
    ["10001", { default_max_price_cents: 10_001 }, "invalid_request"],
    ["a fraction", { default_max_price_cents: 99.5 }, "invalid_request"],
    ["a string", { default_max_price_cents: "100" }, "invalid_request"],
    ["a missing field", {}, "invalid_request"],
    [
      "a field that is not editable (the wallet)",
      { default_max_price_cents: 100, walletAddress: "0x0000000000000000000000000000000000000001" },
      "unknown_field",
    ],
  ])("refuses %s with 400 and changes nothing", async (_, body, code) => {
    const buyer = await seedSignedInAccount();
    const res = await patch(buyer.cookie, body);
    expect(res.status).toBe(400);
    expect((await readError(res)).code).toBe(code);
    expect(await db.account.findUniqueOrThrow({ where: { id: buyer.id } })).toMatchObject({
      walletAddress: buyer.walletAddress,
      defaultMaxPriceCents: null,
    });
  });

  it("is refused from another site", async () => {
    const buyer = await seedSignedInAccount();
    const res = await patch(buyer.cookie, { default_max_price_cents: 5 }, { origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect((await readError(res)).code).toBe("cross_site_request");
    expect((await db.account.findUniqueOrThrow({ where: { id: buyer.id } })).defaultMaxPriceCents).toBeNull();
  });
});
