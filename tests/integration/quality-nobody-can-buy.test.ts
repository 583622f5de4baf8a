/**
 * Quality figures nobody can buy (#37). Two offers of one model on real HTTP upstreams: an honest one that answers in
 * about 120 ms, and one whose supplier trades with itself. Its upstream answers buyers in about 400 ms, and a request
 * carrying the supplier's own marker at once, with a long reply: the self-trade that, measured, would give it the best
 * latency and throughput on the market. The figures must not move, whether the supplier trades from its own account or
 * from a few accounts of its own: only traffic the supplier does not control is measured, and a buyer account's weight
 * is bounded (lib/market/quality/figures.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as offersRoute } from "@/app/v1/market/models/[id]/offers/route";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { clearMarketCache } from "@/lib/market/cache";
import { latencyBin, SAMPLES_PER_SOURCE_HOUR } from "@/lib/market/quality/figures";
import { refreshOfferQuality } from "@/lib/market/quality/refresh";
import type { ModelOfferList, ModelOfferView } from "@/lib/market/schemas";
import { completion, startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { jsonRequest, routeParams } from "../helpers/http";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { callCompletions, seedBuyer } from "../helpers/router-factories";

const HONEST_MS = 120;
const BUYERS_MS = 400;
const SELF_TRADE = "self-trade";
const LONG_REPLY = "word ".repeat(900).trim();

let honestUpstream: CannedUpstream;
let tradingUpstream: CannedUpstream;
let model: { id: string };
let honest: { id: string };
let trading: { id: string; supplierId: string };
let supplierKey: string;
let crowd: string[];
let turn = 0;

/** The upstream's delay is the provider's own time to answer (what latency measures), not a wait of the test's. */
const answeredAfter = (ms: number, content: string) => async () => {
  await sleep(ms);
  return { status: 200, body: completion({ content }) };
};

function ask(key: string, offerId: string, content = "What is the capital of France?", maxTokens = 32) {
  return callCompletions(
    key,
    { model: model.id, messages: [{ role: "user", content }], max_tokens: maxTokens, provider: { only: [offerId] } },
    { "x-svc-max-cents": "200" },
  );
}

/** Each buyer of the crowd asks the offer twice: honest traffic from enough accounts to make a figure. */
async function crowdTraffic(offerId: string) {
  for (let round = 0; round < 2; round++) {
    const statuses = await Promise.all(crowd.map((key) => ask(key, offerId).then((r) => r.status)));
    expect(statuses).toEqual(crowd.map(() => 200));
  }
}

async function selfTrades(key: string, n: number) {
  for (let i = 0; i < n; i++) expect((await ask(key, trading.id, `${SELF_TRADE} ${i}`, 1000)).status).toBe(200);
}

async function published(): Promise<Map<string, ModelOfferView>> {
  clearMarketCache();
  const res = await offersRoute(jsonRequest("GET", `/v1/market/models/${model.id}/offers`), routeParams({ id: model.id }));
  expect(res.status).toBe(200);
  return new Map(((await res.json()) as ModelOfferList).data.map((o) => [o.id, o]));
}

/** Which offer a buyer asking for the lowest latency is sent to (from the snapshot refreshed just before). */
async function fastestByLatency(): Promise<string> {
  await refreshOfferQuality();
  const res = await callCompletions(
    crowd[turn++ % crowd.length],
    { model: model.id, messages: [{ role: "user", content: "Quick question" }], max_tokens: 8, provider: { sort: "latency" } },
    { "x-svc-max-cents": "200" },
  );
  expect(res.status).toBe(200);
  return (await db.completion.findUniqueOrThrow({ where: { id: res.headers.get("x-svc-generation-id")! } })).offerId;
}

beforeAll(async () => {
  [honestUpstream, tradingUpstream] = await Promise.all([startCannedUpstream(), startCannedUpstream()]);
  honestUpstream.answer(answeredAfter(HONEST_MS, "Paris."));
  tradingUpstream.answer(async (body) => {
    const asked = JSON.stringify(body.messages ?? "");
    if (asked.includes(SELF_TRADE)) return { status: 200, body: completion({ content: LONG_REPLY }) };
    return answeredAfter(BUYERS_MS, "Paris.")();
  });
  model = await seedPrivateModel();
  const supplier = await seedBuyer(100_000_000n);
  const on = (upstream: CannedUpstream, priceCents: number, supplierId?: string) =>
    seedOffer({
      models: [{ id: model.id, upstreamModel: "canned-model" }],
      priceCents,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
      supplierId,
    });
  honest = await on(honestUpstream, 100);
  trading = await on(tradingUpstream, 90, supplier.id);
  crowd = (await Promise.all(Array.from({ length: env.QUALITY_MIN_SOURCES }, () => seedBuyer(100_000_000n)))).map((b) => b.key);
  await crowdTraffic(honest.id);
  await crowdTraffic(trading.id);
  supplierKey = supplier.key;
});

afterAll(async () => {
  await db.offer.updateMany({ where: { id: { in: [honest.id, trading.id] } }, data: { status: "withdrawn" } });
  await Promise.all([honestUpstream.stop(), tradingUpstream.stop()]);
});

describe("quality figures nobody can buy", () => {
  it("ten self-trades from the supplier's own account move neither its published figures nor its place under sort: latency", async () => {
    const before = (await published()).get(trading.id)!.measured;
    expect(before["1h"]).toMatchObject({ requests: 2 * crowd.length, sources: crowd.length, sufficient: true });
    expect(latencyBin(before["1h"].latency_ms!.p50)).toBeGreaterThanOrEqual(latencyBin(BUYERS_MS));
    expect(await fastestByLatency()).toBe(honest.id);

    await selfTrades(supplierKey, 10);
    // They were served and billed (the supplier paid itself, less the fee), and each answered at once with a long reply.
    const own = await db.completion.findMany({ where: { offerId: trading.id, accountId: trading.supplierId } });
    expect(own).toHaveLength(10);
    expect(Math.max(...own.map((c) => c.latencyMs))).toBeLessThan(BUYERS_MS);

    const after = (await published()).get(trading.id)!.measured;
    expect(after).toEqual(before);
    expect(await fastestByLatency()).toBe(honest.id);
  });

  it("a few accounts trading at once are measured a few forwards each: they cannot carry the median, nor make a figure alone", async () => {
    const before = (await published()).get(trading.id)!.measured["1h"];
    const sybils = await Promise.all([seedBuyer(100_000_000n), seedBuyer(100_000_000n)]);
    for (const sybil of sybils) await selfTrades(sybil.key, 10);

    const after = (await published()).get(trading.id)!.measured["1h"];
    // At most SAMPLES_PER_SOURCE_HOUR of each account's 10 (twice that if the test straddles an hour).
    const measured = after.requests - before.requests;
    expect(measured).toBeGreaterThanOrEqual(sybils.length * SAMPLES_PER_SOURCE_HOUR);
    expect(measured).toBeLessThanOrEqual(sybils.length * SAMPLES_PER_SOURCE_HOUR * 2);
    expect(after.sources).toBe(before.sources + sybils.length);
    // The crowd's answers still hold the median: it stays in the bins of the answers buyers got.
    expect(latencyBin(after.latency_ms!.p50)).toBeGreaterThanOrEqual(latencyBin(BUYERS_MS));
    expect(await fastestByLatency()).toBe(honest.id);

    // An offer traded only by a handful of accounts has no figure at all, however many trades they make.
    const lonely = await seedOffer({
      models: [{ id: model.id, upstreamModel: "canned-model" }],
      priceCents: 95,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: tradingUpstream.url,
      upstreamApiKey: tradingUpstream.apiKey,
    });
    const few = await Promise.all(Array.from({ length: env.QUALITY_MIN_SOURCES - 1 }, () => seedBuyer(100_000_000n)));
    for (const account of few) {
      for (let i = 0; i < 4; i++) expect((await ask(account.key, lonely.id, `${SELF_TRADE} ${i}`, 1000)).status).toBe(200);
    }
    const alone = (await published()).get(lonely.id)!.measured["1h"];
    expect(alone).toMatchObject({ sources: few.length, sufficient: false, latency_ms: null, throughput_tps: null });
    expect(alone.requests).toBeGreaterThanOrEqual(env.QUALITY_MIN_REQUESTS);
    await db.offer.update({ where: { id: lonely.id }, data: { status: "withdrawn" } });
  });
});
