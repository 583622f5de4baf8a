import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { getBook } from "@/lib/market/book";
import { getOfferCapacity, nextUtcMidnight, remainingMicroDiem, utcDay, utcDayKey } from "@/lib/supply/capacity";
import { cooldownMs, isHealthy, reportUpstreamFailure, reportUpstreamSuccess } from "@/lib/supply/offer-health";
import { listOffers } from "@/lib/supply/list-offers";
import { seedAccount } from "../helpers/factories";
import { seedActiveHold, seedClear, seedOffer, seedPrivateModel } from "../helpers/market-factories";

// A day far from the real clock, so nothing else (sweepers, other files) touches these rows.
const LAST_MINUTE = new Date("2099-06-30T23:59:30.000Z");
const LAST_MS = new Date("2099-06-30T23:59:59.999Z");
const MIDNIGHT = new Date("2099-07-01T00:00:00.000Z");

let modelId: string;
const offerIds: string[] = [];

beforeAll(async () => {
  modelId = (await seedPrivateModel()).id;
});

afterAll(async () => {
  await db.offer.updateMany({ where: { id: { in: offerIds } }, data: { status: "withdrawn" } });
  await db.model.update({ where: { id: modelId }, data: { active: false } });
});

async function offer(options: { price_cents?: number; dailyCapacityMicroDiem?: bigint; supplierId?: string } = {}) {
  const created = await seedOffer({
    models: [modelId],
    priceCents: options.price_cents ?? 90,
    dailyCapacityMicroDiem: options.dailyCapacityMicroDiem ?? 10_000_000n,
    supplierId: options.supplierId,
  });
  offerIds.push(created.id);
  return created;
}

describe("UTC days", () => {
  it("start at 00:00 UTC whatever the local time of the instant", () => {
    expect(utcDay(new Date("2099-06-30T23:59:59.999Z")).toISOString()).toBe("2099-06-30T00:00:00.000Z");
    expect(utcDay(new Date("2099-07-01T00:00:00.000Z")).toISOString()).toBe("2099-07-01T00:00:00.000Z");
    expect(utcDayKey(new Date("2099-07-01T01:30:00+02:00"))).toBe("2099-06-30");
    expect(nextUtcMidnight(LAST_MINUTE).toISOString()).toBe("2099-07-01T00:00:00.000Z");
  });

  it("remaining is capacity − burned − held, never negative", () => {
    expect(remainingMicroDiem({ dailyCapacityMicroDiem: 10n, burnedMicroDiem: 3n, heldMicroDiem: 2n })).toBe(5n);
    expect(remainingMicroDiem({ dailyCapacityMicroDiem: 10n, burnedMicroDiem: 9n, heldMicroDiem: 2n })).toBe(0n);
  });
});

describe("daily capacity", () => {
  it("resets at the UTC day boundary, without rollover", async () => {
    const { id } = await offer({ dailyCapacityMicroDiem: 10_000_000n });
    await seedClear({ offerId: id, modelId, burnMicroDiem: 4_000_000n, at: LAST_MINUTE });
    const hold = await seedActiveHold({ offerId: id, modelId, burnMicroDiem: 1_000_000n, at: LAST_MINUTE });
    try {
      expect(await getOfferCapacity(id, LAST_MS)).toMatchObject({
        day: "2099-06-30",
        burnedMicroDiem: 4_000_000n,
        heldMicroDiem: 1_000_000n,
        remainingMicroDiem: 5_000_000n,
        resetsAt: MIDNIGHT,
      });
      // A new day: the full capacity again, and yesterday's unused 5 diem are gone (no rollover).
      expect(await getOfferCapacity(id, MIDNIGHT)).toMatchObject({
        day: "2099-07-01",
        burnedMicroDiem: 0n,
        heldMicroDiem: 0n,
        remainingMicroDiem: 10_000_000n,
      });

      await seedClear({ offerId: id, modelId, burnMicroDiem: 2_000_000n, at: new Date(MIDNIGHT.getTime() + 1_000) });
      expect((await getOfferCapacity(id, MIDNIGHT))?.remainingMicroDiem).toBe(8_000_000n);
      expect((await getOfferCapacity(id, LAST_MS))?.remainingMicroDiem).toBe(5_000_000n);

      // The supplier's view and the public book use the same day.
      const view = (await listOffers((await db.offer.findUniqueOrThrow({ where: { id } })).supplierId, {}, LAST_MS)).data[0];
      expect(view.today).toMatchObject({ day: "2099-06-30", burned_diem: "4.000000", held_diem: "1.000000", remaining_diem: "5.000000" });
      const before = await getBook(modelId, LAST_MS);
      const after = await getBook(modelId, MIDNIGHT);
      expect(before.levels.find((l) => l.price_cents === 90)?.remaining_diem).toBe("5.000000");
      expect(after.levels.find((l) => l.price_cents === 90)?.remaining_diem).toBe("8.000000");
    } finally {
      // Release the reservation as the router would, so the capacity invariant still holds.
      await db.$transaction([
        db.hold.update({ where: { id: hold.id }, data: { status: "released", settledAt: LAST_MS } }),
        db.offerDay.update({
          where: { offerId_day: { offerId: id, day: utcDay(LAST_MINUTE) } },
          data: { heldMicroDiem: { decrement: 1_000_000n } },
        }),
      ]);
    }
  });

  it("takes a sold-out offer off the book until the next UTC day", async () => {
    const supplier = await seedAccount();
    const { id } = await offer({ price_cents: 4_321, dailyCapacityMicroDiem: 3_000_000n, supplierId: supplier.id });
    await seedClear({ offerId: id, modelId, burnMicroDiem: 3_000_000n, at: LAST_MINUTE });
    const soldOut = await getBook(modelId, LAST_MS);
    expect(soldOut.levels.some((l) => l.price_cents === 4_321)).toBe(false);
    const nextDay = await getBook(modelId, MIDNIGHT);
    expect(nextDay.levels.find((l) => l.price_cents === 4_321)).toEqual({
      price_cents: 4_321,
      remaining_diem: "3.000000",
      offers: 1,
      dispute_rate: 0, // yesterday's clear, undisputed, is in the window
    });
    expect((await listOffers(supplier.id, {}, LAST_MS)).data[0].on_book).toBe(false);
    expect((await listOffers(supplier.id, {}, MIDNIGHT)).data[0].on_book).toBe(true);
  });
});

describe("offer health", () => {
  it("cools down 30 s × 2^(n−1) for the n-th cooldown of a failure streak, capped at 15 minutes", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 100].map(cooldownMs)).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 900_000, 900_000, 900_000]);
  });

  it("cools down at a failure no buyer provoked, doubles the cooldown when the probe after it fails, leaves the book meanwhile, and heals on success", async () => {
    const { id } = await offer({ price_cents: 4_567 });
    const t0 = new Date("2099-06-30T12:00:00.000Z");
    const at = (ms: number) => new Date(t0.getTime() + ms);
    const first = await reportUpstreamFailure(id, "HTTP 401 from upstream", { now: t0 });
    expect(first).toEqual({ consecutiveFailures: 1, unhealthyUntil: at(30_000), cooledDown: true });
    // A request that was in flight fails during the cooldown: counted, but the cooldown stays as it was.
    expect(await reportUpstreamFailure(id, "timeout (no connection)", { now: at(1_000) })).toEqual({
      consecutiveFailures: 2,
      unhealthyUntil: at(30_000),
      cooledDown: false,
    });
    // Each probe after a cooldown fails: 60 s, 120 s, … up to 15 minutes.
    let until = at(30_000);
    for (const expected of [60_000, 120_000, 240_000, 480_000, 900_000, 900_000]) {
      const probe = await reportUpstreamFailure(id, "still failing", { now: until });
      expect(probe?.unhealthyUntil).toEqual(new Date(until.getTime() + expected));
      until = probe!.unhealthyUntil!;
    }
    const row = await db.offer.findUniqueOrThrow({ where: { id } });
    expect(row.consecutiveFailures).toBe(8);
    expect(row.lastFailureReason).toBe("still failing");

    const cooling = new Date(until.getTime() - 1);
    expect(isHealthy(row, cooling)).toBe(false);
    expect(isHealthy(row, until)).toBe(true);
    expect((await getBook(modelId, cooling)).levels.some((l) => l.price_cents === 4_567)).toBe(false);
    expect((await getBook(modelId, until)).levels.some((l) => l.price_cents === 4_567)).toBe(true);

    await reportUpstreamSuccess(id, cooling);
    const healed = await db.offer.findUniqueOrThrow({ where: { id } });
    expect(healed).toMatchObject({ consecutiveFailures: 0, unhealthyUntil: null, lastSuccessAt: cooling });
    expect(isHealthy(healed, cooling)).toBe(true);
    expect((await getBook(modelId, cooling)).levels.some((l) => l.price_cents === 4_567)).toBe(true);

    // The streak starts over: the next failure cools down for 30 s again.
    expect((await reportUpstreamFailure(id, "HTTP 401", { now: cooling }))?.unhealthyUntil).toEqual(new Date(cooling.getTime() + 30_000));
  });

  it("keeps failure reasons short and on one line", async () => {
    const { id } = await offer();
    await reportUpstreamFailure(id, `line one\nline two ${"x".repeat(500)}`);
    const row = await db.offer.findUniqueOrThrow({ where: { id } });
    expect(row.lastFailureReason).toMatch(/^line one line two x+$/);
    expect(row.lastFailureReason!.length).toBe(200);
  });
});
