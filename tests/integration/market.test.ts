import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as bookRoute } from "@/app/v1/market/book/route";
import { GET as marketModelsRoute } from "@/app/v1/market/models/route";
import { GET as statsRoute } from "@/app/v1/market/stats/route";
import { GET as tradesRoute } from "@/app/v1/market/trades/route";
import { GET as modelsRoute } from "@/app/v1/models/route";
import { GET as poolRoute } from "@/app/v1/supply/pool/summary/route";
import { db } from "@/lib/db/client";
import { clearMarketCache } from "@/lib/market/cache";
import type { BookView, MarketModelView, MarketStats, ModelListing, PoolSummary, TradeView } from "@/lib/market/schemas";
import { formatMicros, parseMicros } from "@/lib/money";
import { seedAccount } from "../helpers/factories";
import { jsonRequest, readError } from "../helpers/http";
import { seedClear, seedOffer, seedPrivateModel, type SeedOfferOptions } from "../helpers/market-factories";

/**
 * A seeded market on a model only this file uses (other files post offers and clears in parallel):
 *
 *   offer  supplier  price  capacity  state                 burned today
 *   A1     A         80     10        active                2.0 (1.5 + 0.5), plus 0.7 burned 30 h ago
 *   A2     A         95      5        active                -
 *   B1     B         80      3        active                1.0
 *   B2     B        120     20        active                -
 *   C1     C         70     50        paused                -
 *   C2     C         60      4        cooling down          -
 *   C3     C         65      1        sold out              1.0
 *   C4     C         50      9        withdrawn             -
 *
 * On the book: 80 → 8 + 2 = 10 diem (2 offers), 95 → 5, 120 → 20; 35 diem from suppliers A and B.
 */

let model: string;
let otherModel: string;
const offerIds: string[] = [];

const get = async <T>(handler: (req: Request) => Promise<Response>, path: string): Promise<T> => {
  const res = await handler(jsonRequest("GET", path));
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as T;
};
const diem = (text: string) => parseMicros(text)!;

/** "Today" must not change between seeding and asserting: started in the last minute of a UTC day, wait for the next. */
async function waitOutUtcMidnight() {
  const toMidnight = 86_400_000 - (Date.now() % 86_400_000);
  if (toMidnight < 60_000) await new Promise((resolve) => setTimeout(resolve, toMidnight + 1_000));
}

beforeAll(async () => {
  model = (await seedPrivateModel()).id;
  otherModel = (await seedPrivateModel()).id;
  const [a, b, c] = await Promise.all([seedAccount(), seedAccount(), seedAccount()]);
  await waitOutUtcMidnight();
  const offer = async (supplierId: string, priceCents: number, capacityDiem: number, extra: Partial<SeedOfferOptions> = {}) => {
    const created = await seedOffer({
      supplierId,
      models: [model],
      priceCents,
      dailyCapacityMicroDiem: BigInt(capacityDiem) * 1_000_000n,
      ...extra,
    });
    offerIds.push(created.id);
    return created;
  };
  const a1 = await offer(a.id, 80, 10);
  await offer(a.id, 95, 5);
  const b1 = await offer(b.id, 80, 3, { models: [model, otherModel] });
  await offer(b.id, 120, 20);
  await offer(c.id, 70, 50, { status: "paused" });
  await offer(c.id, 60, 4, { unhealthyUntil: new Date(Date.now() + 3_600_000) });
  const c3 = await offer(c.id, 65, 1);
  await offer(c.id, 50, 9, { status: "withdrawn" });

  await seedClear({ offerId: a1.id, modelId: model, burnMicroDiem: 700_000n, at: new Date(Date.now() - 30 * 3_600_000) });
  await seedClear({ offerId: a1.id, modelId: model, burnMicroDiem: 1_500_000n });
  await seedClear({ offerId: b1.id, modelId: model, burnMicroDiem: 1_000_000n });
  await seedClear({ offerId: c3.id, modelId: model, burnMicroDiem: 1_000_000n });
  await seedClear({ offerId: a1.id, modelId: model, burnMicroDiem: 500_000n });
  clearMarketCache();
});

afterAll(async () => {
  await db.offer.updateMany({ where: { id: { in: offerIds } }, data: { status: "withdrawn" } });
  await db.model.updateMany({ where: { id: { in: [model, otherModel] } }, data: { active: false } });
});

describe("market views on a seeded market", () => {
  it("the book lists routable price levels, cheapest first", async () => {
    const book = await get<BookView>(bookRoute, `/v1/market/book?model=${model}`);
    expect(book).toMatchObject({
      model,
      list_price: { input_diem_per_mtok: "0.700000", output_diem_per_mtok: "2.800000" },
      best_price_cents: 80,
      remaining_diem: "35.000000",
      offers: 4,
      suppliers: 2,
      levels: [
        // Its offers cleared the seeded trades, none disputed; the others have cleared nothing yet.
        { price_cents: 80, remaining_diem: "10.000000", offers: 2, dispute_rate: 0 },
        { price_cents: 95, remaining_diem: "5.000000", offers: 1, dispute_rate: null },
        { price_cents: 120, remaining_diem: "20.000000", offers: 1, dispute_rate: null },
      ],
    });
    // A model sold only by B1 shares B1's remaining capacity.
    const shared = await get<BookView>(bookRoute, `/v1/market/book?model=${otherModel}`);
    expect(shared.levels).toEqual([{ price_cents: 80, remaining_diem: "2.000000", offers: 1, dispute_rate: 0 }]);
  });

  it("trades are the clears, newest first, without identities", async () => {
    const { data } = await get<{ data: TradeView[] }>(tradesRoute, `/v1/market/trades?model=${model}&limit=200`);
    expect(data.map((t) => [t.price_cents, t.burn_diem, t.value_usdc])).toEqual([
      [80, "0.500000", "0.400000"],
      [65, "1.000000", "0.650000"],
      [80, "1.000000", "0.800000"],
      [80, "1.500000", "1.200000"],
      [80, "0.700000", "0.560000"],
    ]);
    for (const trade of data) expect(Object.keys(trade).sort()).toEqual(["burn_diem", "model", "price_cents", "time", "value_usdc"]);
    const times = data.map((t) => Date.parse(t.time));
    expect([...times].sort((x, y) => y - x)).toEqual(times);

    const limited = await get<{ data: TradeView[] }>(tradesRoute, `/v1/market/trades?model=${model}&limit=2`);
    expect(limited.data).toEqual(data.slice(0, 2));
    const everything = await get<{ data: TradeView[] }>(tradesRoute, "/v1/market/trades");
    expect(everything.data.length).toBeGreaterThan(0);
    expect(everything.data.length).toBeLessThanOrEqual(50);
  });

  it("book, models, trades, stats and pool summary agree", async () => {
    const [book, marketModels, trades, stats, pool, models] = await Promise.all([
      get<BookView>(bookRoute, `/v1/market/book?model=${model}`),
      get<{ data: MarketModelView[] }>(marketModelsRoute, "/v1/market/models"),
      get<{ data: TradeView[] }>(tradesRoute, `/v1/market/trades?model=${model}&limit=200`),
      get<MarketStats>(statsRoute, "/v1/market/stats"),
      get<PoolSummary>(poolRoute, "/v1/supply/pool/summary"),
      get<{ data: ModelListing[] }>(modelsRoute, "/v1/models"),
    ]);

    const listed = marketModels.data.find((m) => m.id === model)!;
    expect(listed).toMatchObject({ best_price_cents: 80, remaining_diem: "35.000000", offers: 4, suppliers: 2 });
    expect(listed.best_price_cents).toBe(book.best_price_cents);
    expect(listed.remaining_diem).toBe(book.remaining_diem);
    expect(listed.list_price).toEqual(book.list_price);
    expect(models.data.find((m) => m.id === model)).toMatchObject({ best_price_cents: book.best_price_cents, offers: book.offers });

    // Stats cover the last 24 h: the trades without the one 30 h ago.
    const cutoff = Date.parse(stats.window.from);
    const recent = trades.data.filter((t) => Date.parse(t.time) > cutoff);
    expect(recent).toHaveLength(4);
    const modelStats = stats.models.find((m) => m.model === model)!;
    expect(modelStats).toEqual({
      model,
      clears: recent.length,
      volume_usdc: formatMicros(recent.reduce((sum, t) => sum + diem(t.value_usdc), 0n)),
      volume_diem: formatMicros(recent.reduce((sum, t) => sum + diem(t.burn_diem), 0n)),
      vwap_cents: "76.25", // (80 × 1.5 + 80 × 1 + 65 × 1 + 80 × 0.5) / 4
      low_price_cents: 65,
      high_price_cents: 80,
    });
    expect(modelStats).toMatchObject({ volume_usdc: "3.050000", volume_diem: "4.000000" });
    expect(stats.clears).toBeGreaterThanOrEqual(4);
    expect(stats.models.reduce((sum, m) => sum + m.clears, 0)).toBe(stats.clears);

    // The pool: every active offer (cooling down and sold out included); prices and availability from the book.
    const poolModel = pool.models.find((m) => m.model === model)!;
    expect(poolModel).toEqual({
      model,
      offers: 6,
      suppliers: 3,
      daily_capacity_diem: "43.000000",
      burned_today_diem: modelStats.volume_diem, // the 24 h clears are today's (UTC) burn: the only older one is 30 h old
      remaining_today_diem: "39.000000",
      available_now_diem: book.remaining_diem,
      best_price_cents: book.best_price_cents,
      median_price_cents: 120, // half of the 35 diem on the book is only available at 120
      utilisation: 0.093, // 4 / 43
    });
    expect(pool.suppliers).toBeGreaterThanOrEqual(3);
    expect(pool.offers).toBeGreaterThanOrEqual(6);
    expect(pool.offers_cooling_down).toBeGreaterThanOrEqual(1);
    expect(diem(pool.daily_capacity_diem)).toBeGreaterThanOrEqual(diem(poolModel.daily_capacity_diem));
    expect(diem(pool.available_now_diem)).toBeLessThanOrEqual(diem(pool.remaining_today_diem));
  });

  it("404s an unknown model and validates its query", async () => {
    for (const [handler, path] of [
      [bookRoute, "/v1/market/book"],
      [tradesRoute, "/v1/market/trades"],
    ] as const) {
      const res = await handler(jsonRequest("GET", `${path}?model=no-such-model`));
      expect(res.status).toBe(404);
      expect((await readError(res)).code).toBe("model_not_found");
    }
    for (const path of ["/v1/market/book", "/v1/market/book?model=", "/v1/market/book?model=x&side=ask"]) {
      expect((await bookRoute(jsonRequest("GET", path))).status).toBe(400);
    }
    for (const limit of ["0", "201", "-1", "1.5", "abc"]) {
      expect((await tradesRoute(jsonRequest("GET", `/v1/market/trades?limit=${limit}`))).status).toBe(400);
    }
  });

  it("is public: credentials are neither needed nor looked at", async () => {
    const headers = { authorization: "Bearer nonsense", cookie: "svc_session=x" };
    for (const [handler, path] of [
      [bookRoute, `/v1/market/book?model=${model}`],
      [marketModelsRoute, "/v1/market/models"],
      [tradesRoute, "/v1/market/trades"],
      [statsRoute, "/v1/market/stats"],
      [poolRoute, "/v1/supply/pool/summary"],
    ] as const) {
      expect((await handler(jsonRequest("GET", path, undefined, headers))).status).toBe(200);
    }
  });
});
