import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "@/lib/auth/tokens";
import { db } from "@/lib/db/client";
import { pgPool } from "@/lib/db/pool";
import { requireDatabaseUrl } from "@/lib/env";
import { getOrCreateLedgerAccount } from "@/lib/ledger/accounts";
import { burnMicroDiem, chargeMicros, splitCharge } from "@/lib/money";
import { NO_FEATURES } from "@/lib/supply/features";
import { CLEAR_ITEM_FIELDS, clearBatchQuery, reserveWithKey, type ClearInput } from "@/lib/router/holds";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { buyerBalance, seedBuyer } from "../helpers/router-factories";

/**
 * svc_clear_batch called directly with many items in ONE statement (prisma/migrations/20261125000000_clear_set_based),
 * its items built as the route builds them (clearBatchQuery): the items that share an offer day, a balance or a key
 * are summed onto it once, and each item still gets its own outcome, completion, clear and balanced journal entry.
 */

const FEE_BPS = 1000;
const SHARD = 5;
const SHARD_ACCOUNT = "00000000-0000-4000-8000-000000000105"; // svc_platform_shard(5)
const PRICES = { inputMicroDiemPerMTok: 700_000n, outputMicroDiemPerMTok: 2_800_000n };

type Item = {
  holdId: string;
  completionId?: string;
  promptTokens: number;
  completionTokens: number;
  usageDisputed?: boolean;
  /** What the upstream claimed (default: the billed counts). */
  claimed?: [prompt: number, completion: number];
  endReason?: ClearInput["endReason"];
  streamed?: boolean;
};
type Row = {
  ord: number;
  status: string;
  charge_micros: string | null;
  burn_micro_diem: string | null;
  price_cents: number | null;
  balance_micros: string | null;
  supplier_micros: string | null;
  fee_micros: string | null;
};

function clearInput(i: Item): ClearInput {
  return {
    holdId: i.holdId,
    completionId: i.completionId ?? `chatcmpl-test-${randomUUID()}`,
    promptTokens: i.promptTokens,
    completionTokens: i.completionTokens,
    usageEstimated: false,
    claimed: {
      promptTokens: i.claimed?.[0] ?? i.promptTokens,
      completionTokens: i.claimed?.[1] ?? i.completionTokens,
      reasoningTokens: null,
    },
    reasoningTokens: null,
    usageDisputed: i.usageDisputed ?? false,
    latencyMs: 42,
    totalLatencyMs: 57,
    finishReason: "stop",
    endReason: i.endReason,
    streamed: i.streamed,
  };
}

async function clearBatch(items: Item[], now = new Date(), client: pg.Pool | pg.Client = pgPool()): Promise<Row[]> {
  const { text, values } = clearBatchQuery(items.map(clearInput), { feeBps: FEE_BPS, now, platformShard: SHARD });
  const { rows } = await client.query<Row>(text, values);
  return rows.sort((a, b) => a.ord - b.ord);
}

async function reserve(key: string, modelId: string) {
  const r = await reserveWithKey({
    keyHash: sha256Hex(key),
    modelId,
    requestedMaxPriceCents: 200,
    promptTokens: 100,
    outputTokens: 200,
    features: NO_FEATURES,
    provider: null,
  });
  if (r.status !== "ok") throw new Error(`reservation failed: ${r.status}`);
  return r;
}

/** Two offers (one model each, so a reservation lands where the test wants), two buyers. */
async function seedMarket() {
  const [modelA, modelB] = [await seedPrivateModel(PRICES), await seedPrivateModel(PRICES)];
  const offerA = await seedOffer({ models: [modelA.id], priceCents: 120, dailyCapacityMicroDiem: 1_000_000_000n });
  const offerB = await seedOffer({ models: [modelB.id], priceCents: 100, dailyCapacityMicroDiem: 1_000_000_000n });
  const [x, y] = [await seedBuyer(1_000_000n), await seedBuyer(1_000_000n)];
  return { modelA, modelB, offerA, offerB, x, y };
}

async function offerDay(offerId: string) {
  const d = await db.offerDay.findFirstOrThrow({ where: { offerId } });
  return { held: d.heldMicroDiem, burned: d.burnedMicroDiem, clears: d.clears, disputed: d.disputedClears };
}

describe("svc_clear_batch with many items in one statement", () => {
  it("clears each active hold once, sums what items share, and posts one balanced entry per clear", async () => {
    const { modelA, modelB, offerA, offerB, x, y } = await seedMarket();
    // Offer A's supplier has earned before (its account exists); offer B's supplier is paid here for the first time.
    const supplierA = await db.$transaction((tx) => getOrCreateLedgerAccount(tx, "supplier", offerA.supplierId));

    const h1 = await reserve(x.key, modelA.id); // X, key X, offer A
    const h2 = await reserve(x.key, modelA.id); // X, key X, offer A
    const h3 = await reserve(x.key, modelB.id); // X, key X, offer B
    const h4 = await reserve(y.key, modelA.id); // Y, key Y, offer A
    const h5 = await reserve(y.key, modelA.id); // Y, key Y, offer A: cleared before the batch
    const h6 = await reserve(y.key, modelB.id); // Y, key Y, offer B
    // Every hold reserved 100 prompt + 200 output tokens: 630 micro-diem, i.e. 756 micro-USDC at 120 cents, 630 at 100.
    expect([h1, h2, h3, h4, h5, h6].map((h) => [h.burnMicroDiem, h.amountMicros])).toEqual([
      [630n, 756n],
      [630n, 756n],
      [630n, 630n],
      [630n, 756n],
      [630n, 756n],
      [630n, 630n],
    ]);

    const [first] = await clearBatch([{ holdId: h5.holdId, promptTokens: 100, completionTokens: 200 }]);
    expect(first).toMatchObject({ status: "ok", charge_micros: "756", burn_micro_diem: "630", price_cents: 120 });
    const before = { x: await buyerBalance(x.id), y: await buyerBalance(y.id), dayA: await offerDay(offerA.id) };
    expect(before.x).toEqual({ balance: 1_000_000n, held: 756n * 2n + 630n });
    expect(before.y).toEqual({ balance: 1_000_000n - 756n, held: 756n + 630n });
    // Offer A failed twice since (its upstream is back, the unhealthy window is over).
    await db.offer.update({ where: { id: offerA.id }, data: { consecutiveFailures: 2, unhealthyUntil: new Date(Date.now() - 1000) } });

    const now = new Date();
    const items: Item[] = [
      { holdId: h1.holdId, promptTokens: 50, completionTokens: 100 }, // burn 315
      { holdId: h4.holdId, promptTokens: 100, completionTokens: 1000, usageDisputed: true }, // burn 2870, capped at 630
      { holdId: h2.holdId, promptTokens: 10, completionTokens: 20 }, // burn 63
      { holdId: h5.holdId, promptTokens: 10, completionTokens: 20 }, // already cleared
      { holdId: h1.holdId, promptTokens: 10, completionTokens: 20 }, // h1 again in the same batch
      { holdId: h3.holdId, promptTokens: 100, completionTokens: 100 }, // burn 350
      { holdId: h6.holdId, promptTokens: 1, completionTokens: 0 }, // burn 1: a 1 micro-USDC charge, all fee
      { holdId: randomUUID(), promptTokens: 10, completionTokens: 20 }, // no such hold
    ];
    const rows = await clearBatch(items, now);

    // Expected figures, by lib/money (the TypeScript twin of the SQL arithmetic).
    const metered = (item: Item, hold: { burnMicroDiem: bigint; amountMicros: bigint; priceCents: number }) => {
      const raw = burnMicroDiem(item.promptTokens, item.completionTokens, PRICES);
      const burn = raw < hold.burnMicroDiem ? raw : hold.burnMicroDiem;
      const c = chargeMicros(burn, hold.priceCents);
      const charge = c < hold.amountMicros ? c : hold.amountMicros;
      return { burn, charge, ...splitCharge(charge, FEE_BPS) };
    };
    const e1 = metered(items[0], h1);
    const e4 = metered(items[1], h4);
    const e2 = metered(items[2], h2);
    const e3 = metered(items[5], h3);
    const e6 = metered(items[6], h6);
    expect([e1, e4, e2, e3, e6].map((e) => [e.burn, e.charge, e.supplierMicros, e.feeMicros])).toEqual([
      [315n, 378n, 340n, 38n],
      [630n, 756n, 680n, 76n],
      [63n, 76n, 68n, 8n],
      [350n, 350n, 315n, 35n],
      [1n, 1n, 0n, 1n],
    ]);

    const xAfter = 1_000_000n - e1.charge - e2.charge - e3.charge;
    const yAfter = 1_000_000n - 756n - e4.charge - e6.charge;
    const ok = (e: { burn: bigint; charge: bigint; supplierMicros: bigint; feeMicros: bigint }, price: number, balance: bigint) => ({
      status: "ok",
      charge_micros: String(e.charge),
      burn_micro_diem: String(e.burn),
      price_cents: price,
      balance_micros: String(balance),
      supplier_micros: String(e.supplierMicros),
      fee_micros: String(e.feeMicros),
      cached_tokens: null,
    });
    const notActive = {
      status: "not_active",
      charge_micros: null,
      burn_micro_diem: null,
      price_cents: null,
      balance_micros: null,
      supplier_micros: null,
      fee_micros: null,
      cached_tokens: null,
    };
    expect(rows).toEqual([
      { ord: 1, ...ok(e1, 120, xAfter) },
      { ord: 2, ...ok(e4, 120, yAfter) },
      { ord: 3, ...ok(e2, 120, xAfter) },
      { ord: 4, ...notActive },
      { ord: 5, ...notActive },
      { ord: 6, ...ok(e3, 100, xAfter) },
      { ord: 7, ...ok(e6, 100, yAfter) },
      { ord: 8, ...notActive },
    ]);

    // Balances: each buyer paid its clears, and nothing is held any more.
    expect(await buyerBalance(x.id)).toEqual({ balance: xAfter, held: 0n });
    expect(await buyerBalance(y.id)).toEqual({ balance: yAfter, held: 0n });
    // Keys: what each spent is exactly what it was charged (the first clear of h5 included).
    const spent = async (id: string) => (await db.apiKey.findUniqueOrThrow({ where: { id } })).spentMicros;
    expect(await spent(x.apiKeyId)).toBe(e1.charge + e2.charge + e3.charge);
    expect(await spent(y.apiKeyId)).toBe(756n + e4.charge + e6.charge);
    // Offer days: burned what was metered, released what was reserved, counted the clears and the dispute.
    expect(await offerDay(offerA.id)).toEqual({
      held: 0n,
      burned: before.dayA.burned + e1.burn + e4.burn + e2.burn,
      clears: before.dayA.clears + 3,
      disputed: 1,
    });
    expect(await offerDay(offerB.id)).toEqual({ held: 0n, burned: e3.burn + e6.burn, clears: 2, disputed: 0 });
    // Suppliers: A's existing account earned its shares; B's account was created on first use (its 1-micro clear
    // earned it nothing, so that entry has no supplier line).
    expect((await db.ledgerAccount.findUniqueOrThrow({ where: { id: supplierA.id } })).balanceMicros).toBe(
      680n + e1.supplierMicros + e4.supplierMicros + e2.supplierMicros,
    );
    const supplierB = await db.ledgerAccount.findUniqueOrThrow({
      where: { kind_ownerId: { kind: "supplier", ownerId: offerB.supplierId } },
    });
    expect(supplierB.balanceMicros).toBe(e3.supplierMicros + e6.supplierMicros);

    // Holds: the five cleared now, settled at the batch's time.
    const holds = await db.hold.findMany({ where: { id: { in: [h1, h2, h3, h4, h6].map((h) => h.holdId) } } });
    expect(holds.map((h) => [h.status, h.settledAt?.getTime()])).toEqual(holds.map(() => ["cleared", now.getTime()]));

    // Records: one completion, one clear and one entry per cleared item, each entry's lines balanced and exactly
    // buyer -charge, supplier +share, platform shard +fee, zero amounts left out.
    const completions = await db.completion.findMany({
      where: { holdId: { in: [h1, h2, h3, h4, h6].map((h) => h.holdId) } },
      include: { clear: { include: { journalEntry: { include: { lines: true } } } } },
    });
    expect(completions).toHaveLength(5);
    const byHold = new Map(completions.map((c) => [c.holdId, c]));
    const buyerX = (await db.ledgerAccount.findUniqueOrThrow({ where: { kind_ownerId: { kind: "buyer", ownerId: x.id } } })).id;
    const buyerY = (await db.ledgerAccount.findUniqueOrThrow({ where: { kind_ownerId: { kind: "buyer", ownerId: y.id } } })).id;
    const expected: [string, ReturnType<typeof metered>, string, string, number][] = [
      [h1.holdId, e1, buyerX, supplierA.id, 0],
      [h4.holdId, e4, buyerY, supplierA.id, 1],
      [h2.holdId, e2, buyerX, supplierA.id, 2],
      [h3.holdId, e3, buyerX, supplierB.id, 5],
      [h6.holdId, e6, buyerY, supplierB.id, 6],
    ];
    for (const [holdId, e, buyer, supplier, index] of expected) {
      const c = byHold.get(holdId)!;
      expect(c).toMatchObject({
        promptTokens: items[index].promptTokens,
        completionTokens: items[index].completionTokens,
        usageDisputed: items[index].usageDisputed ?? false,
        latencyMs: 42,
      });
      expect(c.clear).toMatchObject({
        burnMicroDiem: e.burn,
        chargeMicros: e.charge,
        supplierMicros: e.supplierMicros,
        feeMicros: e.feeMicros,
      });
      const entry = c.clear!.journalEntry!;
      expect(entry.kind).toBe("clear");
      expect(entry.lines.reduce((s, l) => s + l.amountMicros, 0n)).toBe(0n);
      const lines = entry.lines.map((l) => [l.ledgerAccountId, l.amountMicros]);
      const want = [
        [buyer, -e.charge],
        [supplier, e.supplierMicros],
        [SHARD_ACCOUNT, e.feeMicros],
      ].filter(([, amount]) => amount !== 0n);
      expect(lines.sort()).toEqual(want.sort());
    }

    // Health: the served offers' failure streak is over.
    expect(await db.offer.findUniqueOrThrow({ where: { id: offerA.id } })).toMatchObject({
      consecutiveFailures: 0,
      unhealthyUntil: null,
      lastSuccessAt: now,
    });
  });

  it("a batch with no active hold answers not_active for each and changes nothing", async () => {
    const { modelA, x } = await seedMarket();
    const h = await reserve(x.key, modelA.id);
    await clearBatch([{ holdId: h.holdId, promptTokens: 10, completionTokens: 10 }]);
    const balance = await buyerBalance(x.id);

    const rows = await clearBatch([
      { holdId: h.holdId, promptTokens: 10, completionTokens: 10 },
      { holdId: randomUUID(), promptTokens: 10, completionTokens: 10 },
    ]);
    expect(rows.map((r) => [r.ord, r.status, r.charge_micros, r.balance_micros])).toEqual([
      [1, "not_active", null, null],
      [2, "not_active", null, null],
    ]);
    expect(await buyerBalance(x.id)).toEqual(balance);
    expect((await db.hold.findUniqueOrThrow({ where: { id: h.holdId } })).status).toBe("cleared");
    expect(await db.completion.count({ where: { accountId: x.id } })).toBe(1);
  });

  it("refuses an item it cannot take on its own, and clears the rest in the same statement", async () => {
    const { modelA, x, y } = await seedMarket();
    const [h1, h2, h3, h4, h5, h6] = [
      await reserve(x.key, modelA.id),
      await reserve(x.key, modelA.id),
      await reserve(x.key, modelA.id),
      await reserve(y.key, modelA.id),
      await reserve(y.key, modelA.id),
      await reserve(y.key, modelA.id),
    ];
    const taken = `chatcmpl-test-${randomUUID()}`;
    await clearBatch([{ holdId: h1.holdId, completionId: taken, promptTokens: 10, completionTokens: 10 }]);
    const repeated = `chatcmpl-test-${randomUUID()}`;
    const before = { x: await buyerBalance(x.id), y: await buyerBalance(y.id) };

    const rows = await clearBatch([
      { holdId: h2.holdId, completionId: taken, promptTokens: 10, completionTokens: 10 }, // a completion id already used
      { holdId: h3.holdId, completionId: repeated, promptTokens: 10, completionTokens: 10 }, // first use of an id: fine
      { holdId: h4.holdId, completionId: repeated, promptTokens: 10, completionTokens: 10 }, // the same id again
      { holdId: h5.holdId, promptTokens: 10, completionTokens: -5 }, // a negative count
      { holdId: h6.holdId, promptTokens: 10, completionTokens: 20, claimed: [2_147_483_648, 9_007_199_254_740_991], usageDisputed: true }, // claims beyond int
      { holdId: h1.holdId, promptTokens: 10, completionTokens: 10 }, // already cleared
    ]);

    expect(rows.map((r) => [r.ord, r.status])).toEqual([
      [1, "rejected"],
      [2, "ok"],
      [3, "rejected"],
      [4, "rejected"],
      [5, "ok"],
      [6, "not_active"],
    ]);
    // The refused items changed nothing: their holds are still active (the caller releases them), nothing charged for them.
    const status = async (id: string) => (await db.hold.findUniqueOrThrow({ where: { id } })).status;
    expect([await status(h2.holdId), await status(h4.holdId), await status(h5.holdId)]).toEqual(["active", "active", "active"]);
    expect([await status(h3.holdId), await status(h6.holdId)]).toEqual(["cleared", "cleared"]);
    expect(await buyerBalance(x.id)).toEqual({ balance: before.x.balance - BigInt(rows[1].charge_micros!), held: h2.amountMicros });
    expect(await buyerBalance(y.id)).toEqual({
      balance: before.y.balance - BigInt(rows[4].charge_micros!),
      held: h4.amountMicros + h5.amountMicros,
    });
    // A claim beyond what the column holds is stored clamped to it (the clear recorded it as disputed).
    const six = await db.completion.findUniqueOrThrow({ where: { holdId: h6.holdId } });
    expect(six).toMatchObject({
      promptTokens: 10,
      completionTokens: 20,
      claimedPromptTokens: 2_147_483_647,
      claimedCompletionTokens: 2_147_483_647,
      usageDisputed: true,
    });
    // A refused item can be cleared again once what it carried is right.
    expect(await clearBatch([{ holdId: h2.holdId, promptTokens: 10, completionTokens: 10 }])).toMatchObject([{ status: "ok" }]);
  });

  it("records how each answer ended and whether it was streamed, and refuses an ending it does not know", async () => {
    const { modelA, x } = await seedMarket();
    const [h1, h2, h3, h4] = [
      await reserve(x.key, modelA.id),
      await reserve(x.key, modelA.id),
      await reserve(x.key, modelA.id),
      await reserve(x.key, modelA.id),
    ];
    const rows = await clearBatch([
      { holdId: h1.holdId, promptTokens: 10, completionTokens: 10 }, // a caller that says nothing: completed, not streamed
      { holdId: h2.holdId, promptTokens: 10, completionTokens: 3, endReason: "client_cancelled", streamed: true },
      { holdId: h3.holdId, promptTokens: 10, completionTokens: 0, endReason: "timeout", streamed: true },
      { holdId: h4.holdId, promptTokens: 10, completionTokens: 10, endReason: "abandoned" as ClearInput["endReason"] },
    ]);
    expect(rows.map((r) => r.status)).toEqual(["ok", "ok", "ok", "rejected"]);
    const ended = async (holdId: string) => {
      const c = await db.completion.findUniqueOrThrow({ where: { holdId } });
      return [c.endReason, c.streamed, c.completionTokens];
    };
    expect([await ended(h1.holdId), await ended(h2.holdId), await ended(h3.holdId)]).toEqual([
      ["completed", false, 10],
      ["client_cancelled", true, 3],
      ["timeout", true, 0],
    ]);
    // The refused item changed nothing: its hold is still active, for the caller to release.
    expect((await db.hold.findUniqueOrThrow({ where: { id: h4.holdId } })).status).toBe("active");
    expect((await buyerBalance(x.id)).held).toBe(h4.amountMicros);
    // The column itself holds an ending to the four.
    await expect(pgPool().query("UPDATE completions SET end_reason = 'abandoned' WHERE hold_id = $1", [h1.holdId])).rejects.toMatchObject({
      code: "22P02",
    });
  });

  it("takes each item as the route builds it: the type's fields in its order, any text exactly as sent", async () => {
    const { rows: fields } = await pgPool().query<{ name: string }>(
      "SELECT attname::text AS name FROM pg_attribute WHERE attrelid = 'svc_clear_item'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
    );
    expect(fields.map((f) => f.name)).toEqual([...CLEAR_ITEM_FIELDS]);

    const { modelA, x } = await seedMarket();
    const h = await reserve(x.key, modelA.id);
    // Every character the array and record literals give a meaning to.
    const completionId = `chatcmpl-test-"q" \\b\\ ,(p){c}'NULL' ${randomUUID()}`;
    expect(
      await clearBatch([{ holdId: h.holdId, completionId, promptTokens: 7, completionTokens: 9, claimed: [8, 2 ** 53 - 1] }]),
    ).toMatchObject([{ status: "ok" }]);
    expect(await db.completion.findUniqueOrThrow({ where: { holdId: h.holdId } })).toMatchObject({
      id: completionId,
      promptTokens: 7,
      completionTokens: 9,
      claimedPromptTokens: 8,
      claimedCompletionTokens: 2_147_483_647,
      claimedReasoningTokens: null,
      reasoningTokens: null,
      finishReason: "stop",
    });
  });

  it("meters a hold only at the prices it was reserved at: a hold without them is not cleared, and nothing is charged", async () => {
    const { modelA, x } = await seedMarket();
    const h = await reserve(x.key, modelA.id);
    // As a hold reserved before holds carried their prices (20261124000000_hot_path_batched) would be.
    await db.hold.update({ where: { id: h.holdId }, data: { inputMicroDiemPerMTok: null, outputMicroDiemPerMTok: null } });
    const before = await buyerBalance(x.id);
    expect(await clearBatch([{ holdId: h.holdId, promptTokens: 10, completionTokens: 10 }])).toMatchObject([
      { status: "not_active", charge_micros: null },
    ]);
    expect(await buyerBalance(x.id)).toEqual(before);
    expect((await db.hold.findUniqueOrThrow({ where: { id: h.holdId } })).status).toBe("active");
    expect(await db.completion.count({ where: { holdId: h.holdId } })).toBe(0);
  });

  it("reserves every item it can and refuses the one it cannot, in one statement", async () => {
    const { modelA, x } = await seedMarket();
    // A model priced so high that a large request's burn, charged at any price, would overflow a bigint.
    const dear = await seedPrivateModel({ inputMicroDiemPerMTok: 9_000_000_000_000_000n, outputMicroDiemPerMTok: 1n });
    await seedOffer({ models: [dear.id], priceCents: 100, dailyCapacityMicroDiem: 1_000_000_000n });
    const hash = sha256Hex(x.key);
    const items = [
      [hash, modelA.id, 100, 200],
      [hash, modelA.id, -100, 200], // a negative count
      [hash, dear.id, 2_000_000, 1], // a burn beyond any charge a bigint holds
      [hash, modelA.id, 100, 200],
    ] as const;
    const { rows } = await pgPool().query<{ ord: number; status: string; hold_id: string | null }>(
      `SELECT ord, outcome->>'status' AS status, outcome->>'hold_id' AS hold_id FROM svc_reserve_batch($1::text[], $2::text[], $3::int[], $4::int[], $5::int[], $6::boolean[],
        $7::boolean[], $8::boolean[], $9::jsonb[], $10::jsonb[], $11::int, $12::timestamptz, $13::timestamptz)`,
      [
        items.map((i) => i[0]),
        items.map((i) => i[1]),
        items.map(() => 200),
        items.map((i) => i[2]),
        items.map((i) => i[3]),
        items.map(() => false),
        items.map(() => false),
        items.map(() => false),
        items.map(() => null),
        items.map(() => null),
        100,
        new Date(),
        new Date(Date.now() + 60_000),
      ],
    );
    expect(rows.sort((a, b) => a.ord - b.ord).map((r) => [r.ord, r.status])).toEqual([
      [1, "ok"],
      [2, "rejected"],
      [3, "rejected"],
      [4, "ok"],
    ]);
    expect(await db.hold.count({ where: { accountId: x.id, status: "active" } })).toBe(2);
    expect((await buyerBalance(x.id)).held).toBe(756n * 2n);
  });
});

// The embedded database is one backend session for every connection: there is no second transaction to wait for.
// eslint-disable-next-line no-restricted-properties -- set by the test setup when the suite runs on the embedded database
describe.skipIf(process.env.SVC_TEST_EMBEDDED_DB === "1")("concurrent clear batches", () => {
  /** Waits until the backend `pid` is blocked on a lock. */
  async function waitingOnLock(pid: number) {
    for (let i = 0; i < 200; i++) {
      const { rows } = await pgPool().query<{ w: string | null }>("SELECT wait_event_type AS w FROM pg_stat_activity WHERE pid = $1", [
        pid,
      ]);
      if (rows[0]?.w === "Lock") return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`backend ${pid} never waited on a lock`);
  }

  it("take the rows of each table in one order, so they wait for each other instead of deadlocking", async () => {
    // Two offers, in id order lo < hi, two buyers X and Y. Batch 1 clears (lo, Y) and (hi, X); batch 2 clears (hi, Y).
    // Clearing item by item, batch 1 would hold Y's balance while waiting for the day of hi, which batch 2 holds
    // while waiting for Y's balance: a deadlock. Taking all offer days before any balance, batch 1 holds the day of
    // hi before it needs Y's key, and batch 2 simply waits.
    const { modelA, modelB, offerA, offerB, x, y } = await seedMarket();
    const [lo, hi] = offerA.id < offerB.id ? [modelA, modelB] : [modelB, modelA];
    const loY = await reserve(y.key, lo.id);
    const hiX = await reserve(x.key, hi.id);
    const hiY = await reserve(y.key, hi.id);

    const url = requireDatabaseUrl();
    const [blocker, one, two] = [
      new pg.Client({ connectionString: url }),
      new pg.Client({ connectionString: url }),
      new pg.Client({ connectionString: url }),
    ];
    await Promise.all([blocker.connect(), one.connect(), two.connect()]);
    try {
      const pid = async (c: pg.Client) => (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid;
      const [pidOne, pidTwo] = [await pid(one), await pid(two)];
      // The blocker holds Y's key, so batch 1 stops there with everything it locks before keys.
      await blocker.query("BEGIN");
      await blocker.query("SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE", [y.apiKeyId]);
      const batch1 = clearBatch(
        [
          { holdId: loY.holdId, promptTokens: 10, completionTokens: 10 },
          { holdId: hiX.holdId, promptTokens: 10, completionTokens: 10 },
        ],
        new Date(),
        one,
      );
      await waitingOnLock(pidOne);
      const batch2 = clearBatch([{ holdId: hiY.holdId, promptTokens: 10, completionTokens: 10 }], new Date(), two);
      await waitingOnLock(pidTwo);
      await blocker.query("COMMIT");

      const [r1, r2] = await Promise.all([batch1, batch2]); // a deadlock would reject one of them (40P01)
      expect([...r1, ...r2].map((r) => r.status)).toEqual(["ok", "ok", "ok"]);
      expect(await buyerBalance(y.id)).toMatchObject({ held: 0n });
      expect(await buyerBalance(x.id)).toMatchObject({ held: 0n });
    } finally {
      await blocker.query("ROLLBACK").catch(() => undefined);
      await Promise.all([blocker.end(), one.end(), two.end()]);
    }
  });
});

describe("the hot path's plans", () => {
  /** Whether each hot-path function carries `setting` (e.g. "jit=off") in its own configuration, by name. */
  async function hotPathFunctionsSetting(setting: string): Promise<[string, boolean][]> {
    const rows = await db.$queryRaw<{ name: string; config: string[] | null }[]>`
      SELECT proname::text AS name, proconfig AS config FROM pg_proc
      WHERE proname IN ('svc_reserve_batch', 'svc_clear_batch', 'svc_release_hold') ORDER BY proname`;
    return rows.map((r) => [r.name, r.config?.includes(setting) ?? false]);
  }

  // Each connection plans these functions' statements once and keeps the plans; planned while the tables were nearly
  // empty (a fresh deploy, a new instance), they were sequential scans of holds, balances, keys and offer days for
  // as long as the connection lived (prisma/migrations/20261126000000_hot_path_index_plans). A CREATE OR REPLACE
  // that forgets to restate the setting brings that back.
  it("price sequential scans out of the reservation, the clear and the release, whatever the tables' statistics", async () => {
    expect(await hotPathFunctionsSetting("enable_seqscan=off")).toEqual([
      ["svc_clear_batch", true],
      ["svc_release_hold", true],
      ["svc_reserve_batch", true],
    ]);
  });

  // With sequential scans priced out, a scan the planner cannot avoid costs 10^10, past jit_above_cost: PostgreSQL
  // then JIT-compiled that statement on every execution, milliseconds of CPU per completion at concurrency 1.
  it("never JIT-compile the reservation's, the clear's and the release's statements", async () => {
    expect(await hotPathFunctionsSetting("jit=off")).toEqual([
      ["svc_clear_batch", true],
      ["svc_release_hold", true],
      ["svc_reserve_batch", true],
    ]);
  });

  // The clear checks that each completion id is new. Written as NOT EXISTS in a select list, the planner could hash
  // the whole completions table instead of probing it, and with the table small (a fresh market's first few
  // thousand) it did: every clear read every completion, most of the clear's PostgreSQL time at concurrency 1.
  it("look each completion id up by key: a clear reads one completion row, not the table", async () => {
    const { modelA, x } = await seedMarket();
    // A table of a few hundred completions, the size at which hashing it looked cheaper than probing it.
    const holds = [];
    for (let i = 0; i < 300; i++) holds.push(await reserve(x.key, modelA.id));
    const cleared = await clearBatch(holds.slice(1).map((h) => ({ holdId: h.holdId, promptTokens: 1, completionTokens: 1 })));
    expect(cleared.every((r) => r.status === "ok")).toBe(true);
    await db.$executeRaw`ANALYZE completions`;

    // A new connection plans the function afresh; the session's table counters, read before and after the clear in
    // one transaction, say what the clear read (they also hold what the session read before and has not reported
    // yet: on the embedded database, one backend behind every connection, that is everything since it started).
    const client = new pg.Client({ connectionString: requireDatabaseUrl() });
    await client.connect();
    const rowsRead = async () => {
      const { rows } = await client.query<{ read: string }>(
        "SELECT (COALESCE(idx_tup_fetch, 0) + COALESCE(seq_tup_read, 0))::text AS read FROM pg_stat_xact_user_tables WHERE relname = 'completions'",
      );
      return Number(rows[0]?.read ?? 0);
    };
    try {
      await client.query("BEGIN");
      const before = await rowsRead();
      const [row] = await clearBatch([{ holdId: holds[0].holdId, promptTokens: 1, completionTokens: 1 }], new Date(), client);
      expect(row.status).toBe("ok");
      // At most the foreign key's check of the new clear's completion (and the probe, which finds none).
      expect((await rowsRead()) - before).toBeLessThanOrEqual(2);
      await client.query("COMMIT");
    } finally {
      await client.end();
    }
  });
});

describe("time-ordered ids (prisma/functions/svc_uuid_v7.sql)", () => {
  /** The Unix milliseconds a version 7 UUID leads with. */
  const uuidMs = (id: string) => parseInt(id.replace(/-/g, "").slice(0, 12), 16);

  it("gives holds, clears and journal entries version 7 UUIDs that carry their creation time and increase with it", async () => {
    const { modelA, x } = await seedMarket();
    const before = Date.now();
    const h1 = await reserve(x.key, modelA.id);
    await new Promise((r) => setTimeout(r, 5));
    const h2 = await reserve(x.key, modelA.id);
    const rows = await clearBatch([
      { holdId: h1.holdId, promptTokens: 10, completionTokens: 20 },
      { holdId: h2.holdId, promptTokens: 10, completionTokens: 20 },
    ]);
    expect(rows.map((r) => r.status)).toEqual(["ok", "ok"]);
    const after = Date.now();

    for (const id of [h1.holdId, h2.holdId]) expect(id[14]).toBe("7"); // the version nibble
    expect(h2.holdId > h1.holdId).toBe(true);
    expect(uuidMs(h2.holdId) - uuidMs(h1.holdId)).toBeGreaterThanOrEqual(5);
    const clears = await db.clear.findMany({
      where: { completion: { holdId: { in: [h1.holdId, h2.holdId] } } },
      include: { journalEntry: true },
    });
    expect(clears).toHaveLength(2);
    for (const clear of clears) {
      for (const id of [clear.id, clear.journalEntry!.id]) {
        expect(id[14]).toBe("7");
        expect(uuidMs(id)).toBeGreaterThanOrEqual(before);
        expect(uuidMs(id)).toBeLessThanOrEqual(after);
      }
    }
  });

  it("leads completion ids with the time, so a later id sorts after an earlier one", async () => {
    const { timeOrderedId } = await import("@/lib/auth/tokens");
    const earlier = timeOrderedId(18, Date.UTC(2026, 0, 1));
    const later = timeOrderedId(18, Date.UTC(2026, 0, 1) + 1);
    expect(earlier).toMatch(/^[0-9a-z]{9}[0-9A-Za-z]{25}$/);
    expect(earlier.slice(0, 9)).toBe(Date.UTC(2026, 0, 1).toString(36).padStart(9, "0"));
    expect(later > earlier).toBe(true);
    // Whatever the random part: the time decides.
    expect(timeOrderedId(18, Date.UTC(2026, 0, 1) + 1) > timeOrderedId(18, Date.UTC(2026, 0, 1))).toBe(true);
  });
});
