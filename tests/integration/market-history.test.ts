import { beforeAll, describe, expect, it } from "vitest";
import { GET as historyRoute } from "@/app/v1/market/history/route";
import { computeMarketHistory } from "@/lib/market/history";
import type { MarketHistory } from "@/lib/market/schemas";
import { seedAccount } from "../helpers/factories";
import { jsonRequest, readError } from "../helpers/http";
import { seedClear, seedOffer, seedPrivateModel } from "../helpers/market-factories";

/**
 * GET /v1/market/history: a model's trades in buckets that start at round UTC times, every bucket of the range
 * present, the empty ones saying so (no trades, no price) so the chart can break its line there.
 *
 * "now" is fixed at 37 min 10 s past an hour in the past (hh:37:10); clears on a model only this file uses:
 *   (hh-1):39  80¢ 1.0 diem   before the last hour's first bucket ((hh-1):40)
 *   (hh-1):42  80¢ 1.0 diem   } first 5-minute bucket: 2 trades, VWAP 70.00
 *   (hh-1):44  60¢ 1.0 diem   }
 *   hh:01      80¢ 0.5 diem   fifth bucket (hh:00)
 *   hh:36      90¢ 1.0 diem   last bucket (hh:35)
 *   hh:38      80¢ 1.0 diem   after "now": in no range
 */
const HOUR = 3_600_000;
const MIN = 60_000;
const hh = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
const now = new Date(hh + 37 * MIN + 10_000);
let model: string;

beforeAll(async () => {
  model = (await seedPrivateModel()).id;
  const supplier = await seedAccount();
  const offer = await seedOffer({ supplierId: supplier.id, models: [model], priceCents: 80, dailyCapacityMicroDiem: 100_000_000n });
  const clear = (minutes: number, priceCents: number, burnMicroDiem: bigint) =>
    seedClear({ offerId: offer.id, modelId: model, burnMicroDiem, priceCents, at: new Date(hh + minutes * MIN) });
  await clear(-21, 80, 1_000_000n);
  await clear(-18, 80, 1_000_000n);
  await clear(-16, 60, 1_000_000n);
  await clear(1, 80, 500_000n);
  await clear(36, 90, 1_000_000n);
  await clear(38, 80, 1_000_000n);
});

describe("market history", () => {
  it("the last hour is twelve 5-minute buckets on round times, empty ones kept without a price", async () => {
    const h = await computeMarketHistory({ model, range: "1h" }, now);
    expect(h).toMatchObject({ object: "market.history", model, range: "1h", bucket_seconds: 300, to: now.toISOString() });
    expect(h.from).toBe(new Date(hh - 20 * MIN).toISOString());
    expect(h.data).toHaveLength(12);
    h.data.forEach((b, i) => expect(b.start).toBe(new Date(hh - 20 * MIN + i * 5 * MIN).toISOString()));
    expect(h.data[0]).toEqual({ start: h.from, trades: 2, volume_usdc: "1.400000", burn_diem: "2.000000", vwap_cents: "70.00" });
    for (const i of [1, 2, 3, 5, 6, 7, 8, 9, 10]) {
      expect(h.data[i]).toMatchObject({ trades: 0, volume_usdc: "0.000000", burn_diem: "0.000000", vwap_cents: null });
    }
    expect(h.data[4]).toMatchObject({ trades: 1, volume_usdc: "0.400000", vwap_cents: "80.00" });
    expect(h.data[11]).toMatchObject({ trades: 1, volume_usdc: "0.900000", vwap_cents: "90.00" });
  });

  it("the last day is 24 hourly buckets and the last week 28 six-hourly ones, each starting at a round UTC time", async () => {
    const day = await computeMarketHistory({ model, range: "1d" }, now);
    expect(day.bucket_seconds).toBe(3600);
    expect(day.data).toHaveLength(24);
    expect(day.data.every((b) => Date.parse(b.start) % HOUR === 0)).toBe(true);
    expect(day.data[23]).toMatchObject({ start: new Date(hh).toISOString(), trades: 2, burn_diem: "1.500000" });
    // (hh-1):39, :42 and :44: 2.4 in the hour before, at (80 + 80 + 60) / 3.
    expect(day.data[22]).toMatchObject({ trades: 3, volume_usdc: "2.200000", vwap_cents: "73.33" });
    expect(day.data.slice(0, 22).every((b) => b.trades === 0 && b.vwap_cents === null)).toBe(true);

    const week = await computeMarketHistory({ model, range: "1w" }, now);
    expect(week.bucket_seconds).toBe(21_600);
    expect(week.data).toHaveLength(28);
    expect(week.data.every((b) => Date.parse(b.start) % (6 * HOUR) === 0)).toBe(true);
    expect(week.data.reduce((n, b) => n + b.trades, 0)).toBe(5);
  });

  it("answers over HTTP, publicly, and refuses an unknown model or range", async () => {
    const res = await historyRoute(
      jsonRequest("GET", `/v1/market/history?model=${model}&range=1w`, undefined, { cookie: "svc_session=x" }),
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as MarketHistory;
    expect(body.range).toBe("1w");
    expect(body.data).toHaveLength(28);
    // The default range is a day.
    expect(((await (await historyRoute(jsonRequest("GET", `/v1/market/history?model=${model}`))).json()) as MarketHistory).range).toBe(
      "1d",
    );

    const unknown = await historyRoute(jsonRequest("GET", "/v1/market/history?model=no-such-model"));
    expect(unknown.status).toBe(404);
    expect((await readError(unknown)).code).toBe("model_not_found");
    for (const query of ["", `?model=${model}&range=2h`, `?model=${model}&range=1h&extra=1`]) {
      expect((await historyRoute(jsonRequest("GET", `/v1/market/history${query}`))).status).toBe(400);
    }
  });
});
