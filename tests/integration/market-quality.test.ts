/**
 * Market quality measured from real traffic (issue 23): several reference upstreams serve one model as real providers
 * differ (a fast one, a slow one, a flaky one, one that overbills), known traffic goes through POST
 * /v1/chat/completions, and GET /v1/market/models/{id}/offers must publish exactly what that traffic did; the refresh
 * job's routing snapshot (offer_quality) must agree with it. The traffic comes from a crowd of buyers, as a market's
 * does: at most SAMPLES_PER_SOURCE_HOUR forwards of one buyer account per offer and hour are measured (#37).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as offersRoute } from "@/app/v1/market/models/[id]/offers/route";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { clearMarketCache } from "@/lib/market/cache";
import { binRange, KEEP_BUCKETS, latencyBin, SAMPLES_PER_SOURCE_HOUR, statsBucket, WINDOWS } from "@/lib/market/quality/figures";
import { refreshOfferQuality } from "@/lib/market/quality/refresh";
import type { MeasuredWindowView, ModelOfferList, ModelOfferView } from "@/lib/market/schemas";
import { chargeMicros, formatMicros } from "@/lib/money";
import { supplierPublicId } from "@/lib/supply/public-id";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { jsonRequest, readError, routeParams } from "../helpers/http";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { callCompletions, seedBuyer } from "../helpers/router-factories";

const SLOW_MS = 520; // just above 512 ms, a bin's lower bound: the slow upstream's answers land in [512, 724) or above
const hello = { role: "user", content: "Hello" };

let fast: ReferenceUpstream;
let slow: ReferenceUpstream;
let flaky: ReferenceUpstream;
let inflating: ReferenceUpstream;
let model: Awaited<ReturnType<typeof seedPrivateModel>>;
let toolModel: Awaited<ReturnType<typeof seedPrivateModel>>;
let buyer: Awaited<ReturnType<typeof seedBuyer>>;
/** The crowd the measured traffic comes from, taken in turn: 22 requests in a row ask none of them more than 3 times. */
let crowd: Awaited<ReturnType<typeof seedBuyer>>[];
let turn = 0;
const nextBuyer = () => crowd[turn++ % crowd.length];
type Offer = Awaited<ReturnType<typeof seedOffer>>;
const offers: Record<"fast" | "slow" | "flaky" | "inflating" | "sparse", Offer> = {} as never;

beforeAll(async () => {
  [fast, slow, flaky, inflating] = await Promise.all([
    startReferenceUpstream(),
    startReferenceUpstream({ defaultMode: `latency:${SLOW_MS}` }),
    startReferenceUpstream({ defaultMode: "flaky:3" }),
    startReferenceUpstream({ defaultMode: "inflate" }),
  ]);
  model = await seedPrivateModel();
  toolModel = await seedPrivateModel({ supportsTools: true });
  const on = (via: ReferenceUpstream, priceCents: number) =>
    seedOffer({
      models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
      priceCents,
      dailyCapacityMicroDiem: 1_000_000_000_000n,
      upstreamBaseUrl: via.url,
      upstreamApiKey: via.apiKey,
      status: "paused",
    });
  offers.fast = await on(fast, 60);
  offers.slow = await on(slow, 70);
  offers.flaky = await on(flaky, 80);
  offers.inflating = await on(inflating, 90);
  offers.sparse = await on(fast, 95);
  buyer = await seedBuyer(100_000_000n);
  crowd = await Promise.all(Array.from({ length: 8 }, () => seedBuyer(100_000_000n)));
  expect(SAMPLES_PER_SOURCE_HOUR).toBeGreaterThanOrEqual(3);
});

afterAll(async () => {
  await db.offer.updateMany({ where: { id: { in: Object.values(offers).map((o) => o.id) } }, data: { status: "withdrawn" } });
  await db.model.updateMany({ where: { id: { in: [model.id, toolModel.id] } }, data: { active: false } });
  await Promise.all([fast.stop(), slow.stop(), flaky.stop(), inflating.stop()]);
});

/** Only `offer` is active among this test's offers, so the router (cheapest first) sends it the traffic. */
async function only(offer: Offer) {
  await db.offer.updateMany({ where: { id: { in: Object.values(offers).map((o) => o.id) } }, data: { status: "paused" } });
  await db.offer.update({ where: { id: offer.id }, data: { status: "active" } });
}

const ask = () => callCompletions(nextBuyer().key, { model: model.id, messages: [hello], max_tokens: 16 });

async function sequential(n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await ask()).status);
  return statuses;
}

async function concurrent(n: number): Promise<number[]> {
  return (await Promise.all(Array.from({ length: n }, () => ask()))).map((res) => res.status);
}

async function listOffers(modelId: string): Promise<Response> {
  clearMarketCache();
  return offersRoute(jsonRequest("GET", `/v1/market/models/${encodeURIComponent(modelId)}/offers`), routeParams({ id: modelId }));
}

async function published(): Promise<Map<string, ModelOfferView>> {
  const res = await listOffers(model.id);
  expect(res.status).toBe(200);
  const body = (await res.json()) as ModelOfferList;
  return new Map(body.data.map((o) => [o.id, o]));
}

/** What the completions the offer answered recorded: the truth the figures must match. */
async function answered(offerId: string) {
  const rows = await db.completion.findMany({
    where: { offerId },
    select: { latencyMs: true, completionTokens: true, usageDisputed: true },
  });
  const latencies = rows.map((r) => r.latencyMs).sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.max(1, Math.ceil(q * latencies.length)) - 1];
  const tokens = rows.reduce((n, r) => n + r.completionTokens, 0);
  const latencyMs = latencies.reduce((n, ms) => n + ms, 0);
  return {
    answers: rows.length,
    disputed: rows.filter((r) => r.usageDisputed).length,
    latencies,
    p50: at(0.5),
    p95: at(0.95),
    throughput: Math.round((tokens / (latencyMs / 1000)) * 10) / 10,
  };
}

/** The window's figures match the traffic exactly; its latency percentiles lie in the bins of the recorded ones. */
async function expectWindow(window: MeasuredWindowView, offerId: string, forwards: number) {
  const truth = await answered(offerId);
  expect(window).toMatchObject({
    requests: forwards,
    sufficient: true,
    success_rate: Math.round((truth.answers / forwards) * 10_000) / 10_000,
    dispute_rate: Math.round((truth.disputed / truth.answers) * 10_000) / 10_000,
    throughput_tps: truth.throughput,
  });
  expect(latencyBin(window.latency_ms!.p50)).toBe(latencyBin(truth.p50));
  expect(latencyBin(window.latency_ms!.p95)).toBe(latencyBin(truth.p95));
  return truth;
}

describe("the offers list publishes what real traffic measured", () => {
  it("counts answers, supplier failures and disputes per offer, exactly as sent, and below the minimum sample says so", async () => {
    // Fast: 12 one after another, then 10 at once (they clear in shared batches: each is counted).
    await only(offers.fast);
    expect(await sequential(12)).toEqual(Array(12).fill(200));
    expect(await concurrent(10)).toEqual(Array(10).fill(200));
    // Slow: 10 at once, each at least SLOW_MS upstream.
    await only(offers.slow);
    expect(await concurrent(10)).toEqual(Array(10).fill(200));
    // Flaky: every 3rd request is a 500, the supplier's failure: 12 forwards, 8 answers.
    await only(offers.flaky);
    expect(await sequential(12)).toEqual([200, 200, 502, 200, 200, 502, 200, 200, 502, 200, 200, 502]);
    // Overbilling: every answer claims far more usage than it had: billed at svc's count, disputed, and the claim out
    // of bounds is reported against its health, but the forward was answered and billed.
    await only(offers.inflating);
    expect(await sequential(10)).toEqual(Array(10).fill(200));
    // Sparse: below the minimum sample.
    await only(offers.sparse);
    expect(await sequential(3)).toEqual([200, 200, 200]);
    await db.offer.updateMany({ where: { id: { in: Object.values(offers).map((o) => o.id) } }, data: { status: "active" } });

    const list = await published();
    expect([...list.keys()]).toEqual([offers.fast.id, offers.slow.id, offers.flaky.id, offers.inflating.id, offers.sparse.id]);

    for (const window of ["1h", "24h"] as const) {
      const f = await expectWindow(list.get(offers.fast.id)!.measured[window], offers.fast.id, 22);
      expect(f.answers).toBe(22);
      expect(list.get(offers.fast.id)!.measured[window]).toMatchObject({ success_rate: 1, dispute_rate: 0 });

      const s = await expectWindow(list.get(offers.slow.id)!.measured[window], offers.slow.id, 10);
      expect(s.latencies[0]).toBeGreaterThanOrEqual(SLOW_MS);
      // Within the bin that holds the injected delay, or a slower one: never faster than the upstream was made to be.
      expect(list.get(offers.slow.id)!.measured[window].latency_ms!.p50).toBeGreaterThanOrEqual(binRange(latencyBin(SLOW_MS)).lower);
      expect(list.get(offers.slow.id)!.measured[window].latency_ms!.p50).toBeGreaterThan(
        list.get(offers.fast.id)!.measured[window].latency_ms!.p95,
      );

      const flakyTruth = await expectWindow(list.get(offers.flaky.id)!.measured[window], offers.flaky.id, 12);
      expect(flakyTruth.answers).toBe(8);
      expect(list.get(offers.flaky.id)!.measured[window].success_rate).toBe(0.6667);

      const i = await expectWindow(list.get(offers.inflating.id)!.measured[window], offers.inflating.id, 10);
      expect(i).toMatchObject({ answers: 10, disputed: 10 });
      expect(list.get(offers.inflating.id)!.measured[window]).toMatchObject({ success_rate: 1, dispute_rate: 1 });
      // Its claims were reported against its health (billAndClear), and still no forward was added for them.
      expect((await db.offer.findUniqueOrThrow({ where: { id: offers.inflating.id } })).lastFailureReason).toMatch(/claim/);

      expect(list.get(offers.sparse.id)!.measured[window]).toEqual({
        requests: 3,
        sources: 3,
        sufficient: false,
        success_rate: null,
        dispute_rate: null,
        latency_ms: null,
        throughput_tps: null,
      });
    }
    expect(env.QUALITY_MIN_REQUESTS).toBe(10);

    // The routing snapshot: the 1 h window's p50 and throughput where it is sufficient, null where no window is.
    await refreshOfferQuality();
    const snapshot = new Map(
      (await db.offerQuality.findMany({ where: { offerId: { in: Object.values(offers).map((o) => o.id) } } })).map((q) => [q.offerId, q]),
    );
    for (const name of ["fast", "slow", "flaky", "inflating"] as const) {
      const figures = list.get(offers[name].id)!.measured["1h"];
      expect(snapshot.get(offers[name].id), name).toMatchObject({
        latencyP50Ms: figures.latency_ms!.p50,
        throughputTps: figures.throughput_tps,
      });
    }
    expect(snapshot.get(offers.sparse.id)).toMatchObject({ latencyP50Ms: null, throughputTps: null });
  }, 120_000);

  it("does not count failures that are the buyer's: an upstream 400 for what the request asked", async () => {
    // The reference upstream's venice-uncensored has no tools: a request with tools is its 400, the buyer's error.
    const offer = await seedOffer({
      models: [{ id: toolModel.id, upstreamModel: "venice-uncensored" }],
      priceCents: 100,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: fast.url,
      upstreamApiKey: fast.apiKey,
      features: { tools: true },
    });
    const tool = { type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } };
    const res = await callCompletions(buyer.key, { model: toolModel.id, messages: [hello], tools: [tool], max_tokens: 16 });
    expect(res.status).toBe(400);
    expect((await readError(res)).code).toBe("upstream_rejected_request");
    const served = await callCompletions(buyer.key, { model: toolModel.id, messages: [hello], max_tokens: 16 });
    expect(served.status).toBe(200);

    const body = (await (await listOffers(toolModel.id)).json()) as ModelOfferList;
    expect(body.data.map((o) => [o.id, o.measured["1h"].requests])).toEqual([[offer.id, 1]]);
    await db.offer.update({ where: { id: offer.id }, data: { status: "withdrawn" } });
  });
});

describe("concurrent answers and failures on one offer", () => {
  it("are each counted once: clears in shared batches and failure reports lock the offer, then its measurements", async () => {
    const flakier = await startReferenceUpstream({ defaultMode: "flaky:3" });
    try {
      const m = await seedPrivateModel();
      const offer = await seedOffer({
        models: [{ id: m.id, upstreamModel: "llama-3.3-70b" }],
        priceCents: 50,
        dailyCapacityMicroDiem: 1_000_000_000n,
        upstreamBaseUrl: flakier.url,
        upstreamApiKey: flakier.apiKey,
      });
      const statuses = await Promise.all(
        Array.from(
          { length: 12 },
          async () => (await callCompletions(nextBuyer().key, { model: m.id, messages: [hello], max_tokens: 16 })).status,
        ),
      );
      expect(statuses.sort()).toEqual([...Array(8).fill(200), ...Array(4).fill(502)]);
      const body = (await (await listOffers(m.id)).json()) as ModelOfferList;
      await expectWindow(body.data[0].measured["1h"], offer.id, 12);
      expect(body.data[0].measured["1h"].success_rate).toBe(0.6667);
      await db.offer.update({ where: { id: offer.id }, data: { status: "withdrawn" } });
    } finally {
      await flakier.stop();
    }
  });
});

describe("the refresh job", () => {
  it("deletes measurements older than two days, and the snapshot of an offer no longer measured", async () => {
    const m = await seedPrivateModel();
    const offer = await seedOffer({ models: [m.id], priceCents: 50, dailyCapacityMicroDiem: 1_000_000n, status: "withdrawn" });
    const now = statsBucket(new Date());
    // Outside the 24 h window but kept; and past the two days kept.
    await db.offerStats.createMany({
      data: [
        { offerId: offer.id, bucket: now - WINDOWS["24h"], forwards: 50, answers: 50, latencyMsSum: 5_000n, completionTokens: 500n },
        { offerId: offer.id, bucket: now - KEEP_BUCKETS, forwards: 50, answers: 50, latencyMsSum: 5_000n, completionTokens: 500n },
      ],
    });
    await db.offerQuality.create({ data: { offerId: offer.id, latencyP50Ms: 100, throughputTps: 100, refreshedAt: new Date() } });

    await refreshOfferQuality();
    expect((await db.offerStats.findMany({ where: { offerId: offer.id } })).map((s) => s.bucket)).toEqual([now - WINDOWS["24h"]]);
    expect(await db.offerQuality.findUnique({ where: { offerId: offer.id } })).toBeNull();
  });
});

describe("GET /v1/market/models/{id}/offers", () => {
  it("lists each live offer, cheapest then oldest, priced by the charge rule, with its declarations and probe status", async () => {
    const m = await seedPrivateModel({ inputMicroDiemPerMTok: 700_000n, outputMicroDiemPerMTok: 2_800_000n, maxOutputTokens: 4_096 });
    const older = await seedOffer({ models: [m.id], priceCents: 95, dailyCapacityMicroDiem: 5_000_000n });
    const newer = await seedOffer({ models: [m.id], priceCents: 95, dailyCapacityMicroDiem: 5_000_000n });
    const cheap = await seedOffer({ models: [m.id], priceCents: 80, dailyCapacityMicroDiem: 2_000_000n });
    const flagged = await seedOffer({ models: [m.id], priceCents: 70, dailyCapacityMicroDiem: 2_000_000n });
    const paused = await seedOffer({ models: [m.id], priceCents: 60, dailyCapacityMicroDiem: 2_000_000n, status: "paused" });
    // Posted a minute apart: the older one comes first at the same price.
    await db.offer.update({ where: { id: older.id }, data: { createdAt: new Date(Date.now() - 60_000) } });
    const flaggedAt = new Date("2026-11-20T10:00:00.000Z");
    await db.offer.update({
      where: { id: flagged.id },
      data: {
        probeStatus: "flagged",
        probeDelisted: true,
        probedAt: flaggedAt,
        probeFlaggedAt: flaggedAt,
        probeFlagReason: "answers as another model",
      },
    });
    await db.offer.update({
      where: { id: cheap.id },
      data: { quantization: "fp8", retainsPrompts: false, trainsOnPrompts: false, contextTokens: 8_192, maxOutputTokens: 1_000_000 },
    });

    const res = await listOffers(m.id);
    expect(res.status).toBe(200);
    const body = (await res.json()) as ModelOfferList;
    expect(body).toMatchObject({
      object: "list",
      model: m.id,
      list_price: { input_diem_per_mtok: "0.700000", output_diem_per_mtok: "2.800000" },
      min_requests: 10,
      min_sources: 5,
    });
    expect(body.data.map((o) => o.id)).toEqual([flagged.id, cheap.id, older.id, newer.id]);
    expect(body.data.map((o) => o.id)).not.toContain(paused.id);

    const [f, c, o] = body.data;
    expect(f).toMatchObject({
      supplier: supplierPublicId(flagged.supplierId),
      price_cents: 70,
      on_book: false,
      probe: {
        status: "flagged",
        delisted: true,
        probed_at: flaggedAt.toISOString(),
        flagged_at: flaggedAt.toISOString(),
        reason: "answers as another model",
        evidence: [],
      },
      declared: {
        quantization: "unknown",
        data_policy: { retains_prompts: true, trains_on_prompts: true },
        context_tokens: 32_768,
        max_output_tokens: 4_096,
        streaming: { streams: true, bills_cancelled_in_full: false },
        prompt_caching: { caches_prompts: false, retention_seconds: 300 },
      },
    });
    expect(c).toMatchObject({
      on_book: true,
      capacity_left_diem: "2.000000",
      usd_per_mtok: {
        prompt: formatMicros(chargeMicros(700_000n, 80)),
        completion: formatMicros(chargeMicros(2_800_000n, 80)),
      },
      // A limit above the model's is capped: svc never forwards more than the model allows.
      declared: {
        quantization: "fp8",
        data_policy: { retains_prompts: false, trains_on_prompts: false },
        context_tokens: 8_192,
        max_output_tokens: 4_096,
      },
      probe: { status: "unprobed", delisted: false, probed_at: null, flagged_at: null, reason: null, evidence: [] },
    });
    expect(c.usd_per_mtok).toEqual({ prompt: "0.560000", completion: "2.240000", cached_prompt: null });
    expect(o.measured).toEqual({
      "1h": { requests: 0, sources: 0, sufficient: false, success_rate: null, dispute_rate: null, latency_ms: null, throughput_tps: null },
      "24h": { requests: 0, sources: 0, sufficient: false, success_rate: null, dispute_rate: null, latency_ms: null, throughput_tps: null },
    });
    expect(new Date(o.created_at).getTime()).toBeLessThan(new Date(body.data[3].created_at).getTime());

    await db.offer.updateMany({
      where: { id: { in: [older.id, newer.id, cheap.id, flagged.id, paused.id] } },
      data: { status: "withdrawn" },
    });
    expect((await (await listOffers(m.id)).json()).data).toEqual([]);
  });

  it("is 404 model_not_found for an unknown or retired model, and 400 for an id no model can have", async () => {
    const unknown = await listOffers("no-such-model-anywhere");
    expect(unknown.status).toBe(404);
    expect(await readError(unknown)).toMatchObject({ code: "model_not_found" });

    const retired = await seedPrivateModel();
    await db.model.update({ where: { id: retired.id }, data: { active: false, retiredAt: new Date() } });
    const gone = await listOffers(retired.id);
    expect(gone.status).toBe(404);
    expect(await readError(gone)).toMatchObject({ code: "model_not_found" });

    for (const bad of ["-leading-dash", "a".repeat(129), "spaces are not ids", "semi;colon"]) {
      const res = await listOffers(bad);
      expect(res.status, bad).toBe(400);
      expect(await readError(res)).toMatchObject({ code: "invalid_request" });
    }
  });
});
