/**
 * The market that knows quality (#23), end to end in one market: four real HTTP upstreams serve one model and differ
 * as providers do: a cheap slow one, a pricier fast one, a flaky one that keeps prompts, and the cheapest of all, which
 * serves another model under the name. Nothing is written to the measurement tables by hand: the figures come from the
 * traffic this test sends (a crowd of buyers, and the probes, which are measured with them), the routing snapshot from
 * the refresh job's function, the flag from a probe round.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as offersRoute } from "@/app/v1/market/models/[id]/offers/route";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { clearMarketCache } from "@/lib/market/cache";
import { runProbeRound } from "@/lib/probes";
import { binRange, latencyBin } from "@/lib/market/quality/figures";
import { refreshOfferQuality } from "@/lib/market/quality/refresh";
import type { ModelOfferList, ModelOfferView } from "@/lib/market/schemas";
import { supplierPublicId } from "@/lib/supply/public-id";
import { startReferenceUpstream, type ReferenceUpstream, type UpstreamMode } from "../../scripts/reference-upstream/server";
import { jsonRequest, routeParams } from "../helpers/http";
import { seedPlatformBalance } from "../helpers/ledger-factories";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { callCompletions, seedBuyer } from "../helpers/router-factories";

const SLOW_MS = 250;
const upstreams: ReferenceUpstream[] = [];
let model: { id: string };
/** The buyers, taken in turn: each asks an offer at most once in a row of ten (a crowd, as measured figures need). */
let keys: string[];
let turn = 0;
const offers = {} as Record<"slow" | "fast" | "flaky" | "substituting", { id: string; supplierId: string }>;

async function offerOn(mode: UpstreamMode, priceCents: number, declared: { quantization: "fp8" | "bf16" | "unknown"; keeps: boolean }) {
  const upstream = await startReferenceUpstream({ defaultMode: mode });
  upstreams.push(upstream);
  const offer = await seedOffer({
    models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
    priceCents,
    dailyCapacityMicroDiem: 1_000_000_000n,
    upstreamBaseUrl: upstream.url,
    upstreamApiKey: upstream.apiKey,
  });
  await db.offer.update({
    where: { id: offer.id },
    data: { quantization: declared.quantization, retainsPrompts: declared.keeps, trainsOnPrompts: false },
  });
  return offer;
}

function chat(provider?: unknown) {
  return callCompletions(
    keys[turn++ % keys.length],
    {
      model: model.id,
      messages: [{ role: "user", content: "Which provider answers?" }],
      max_tokens: 16,
      ...(provider !== undefined && { provider }),
    },
    { "x-svc-max-cents": "200" },
  );
}

/** The offer that served a request (from its completion), or the status it failed with. */
async function servedBy(provider?: unknown): Promise<string> {
  const res = await chat(provider);
  if (res.status !== 200) return `HTTP ${res.status}`;
  return (await db.completion.findUniqueOrThrow({ where: { id: res.headers.get("x-svc-generation-id")! } })).offerId;
}

async function published(): Promise<Map<string, ModelOfferView>> {
  clearMarketCache();
  const res = await offersRoute(jsonRequest("GET", `/v1/market/models/${model.id}/offers`), routeParams({ id: model.id }));
  expect(res.status).toBe(200);
  return new Map(((await res.json()) as ModelOfferList).data.map((o) => [o.id, o]));
}

beforeAll(async () => {
  await seedPlatformBalance(1_000_000_000n);
  model = await seedPrivateModel();
  offers.substituting = await offerOn("substitute:qwen3-235b", 60, { quantization: "fp8", keeps: false });
  offers.slow = await offerOn(`latency:${SLOW_MS}`, 70, { quantization: "fp8", keeps: false });
  offers.flaky = await offerOn("flaky:2", 90, { quantization: "unknown", keeps: true });
  offers.fast = await offerOn("ok", 110, { quantization: "bf16", keeps: false });
  keys = (await Promise.all(Array.from({ length: 10 }, () => seedBuyer(100_000_000n)))).map((b) => b.key);
});

afterAll(async () => {
  await Promise.all(upstreams.map((u) => u.stop()));
});

describe("a market that routes by more than price", () => {
  it("routes to the cheapest by default, until the probes catch the substitute and take it off the book", async () => {
    expect(await servedBy()).toBe(offers.substituting.id);

    const round = await runProbeRound({ modelIds: [model.id], budgetMicros: 1_000_000_000n, reference: null });
    expect(round.flagged).toEqual([offers.substituting.id]);

    const list = await published();
    expect(list.get(offers.substituting.id)).toMatchObject({ on_book: false, probe: { status: "flagged", delisted: true } });
    expect(list.get(offers.substituting.id)!.probe.evidence).toContainEqual(expect.objectContaining({ check: "model", got: "qwen3-235b" }));
    // The default now goes to the cheapest offer left on the book: the slow one.
    expect(await servedBy()).toBe(offers.slow.id);
  });

  it("publishes figures that match the traffic sent, and routes by them once the snapshot is refreshed", async () => {
    const perOffer = env.QUALITY_MIN_REQUESTS;
    const results = { slow: [] as string[], fast: [] as string[], flaky: [] as string[] };
    for (let i = 0; i < perOffer; i++) {
      for (const name of ["slow", "fast", "flaky"] as const) results[name].push(await servedBy({ only: [offers[name].id] }));
    }
    // The traffic pinned with `only` went where it was sent; every other request to the flaky one failed (502).
    expect(new Set(results.fast)).toEqual(new Set([offers.fast.id]));
    expect(results.flaky.filter((r) => r === offers.flaky.id)).toHaveLength(perOffer / 2);
    expect(results.flaky.filter((r) => r.startsWith("HTTP 5"))).toHaveLength(perOffer / 2);

    const list = await published();
    const [slow, fast, flaky] = [list.get(offers.slow.id)!, list.get(offers.fast.id)!, list.get(offers.flaky.id)!];
    // The first test's probe round is measured too: each probe a forward, answered when its upstream answered.
    const probes = async (offer: { id: string }) => {
      const runs = await db.probeRun.findMany({ where: { offerId: offer.id }, select: { httpStatus: true } });
      return { sent: runs.length, answered: runs.filter((r) => r.httpStatus === 200).length };
    };
    const [slowProbes, fastProbes, flakyProbes] = [await probes(offers.slow), await probes(offers.fast), await probes(offers.flaky)];
    // The slow offer also served the first test's last request.
    expect(slow.measured["1h"]).toMatchObject({ requests: perOffer + 1 + slowProbes.sent, sufficient: true, success_rate: 1 });
    expect(fast.measured["1h"]).toMatchObject({ requests: perOffer + fastProbes.sent, sufficient: true, success_rate: 1 });
    const flakyForwards = perOffer + flakyProbes.sent;
    expect(flaky.measured["1h"]).toMatchObject({
      requests: flakyForwards,
      sufficient: true,
      success_rate: Math.round(((perOffer / 2 + flakyProbes.answered) / flakyForwards) * 10_000) / 10_000,
    });
    // Percentiles are read back from a histogram: the slow one's median is at least the lower bound of its delay's bin.
    expect(slow.measured["1h"].latency_ms!.p50).toBeGreaterThanOrEqual(binRange(latencyBin(SLOW_MS)).lower);
    expect(fast.measured["1h"].latency_ms!.p50).toBeLessThan(slow.measured["1h"].latency_ms!.p50);
    expect(fast.measured["1h"].throughput_tps!).toBeGreaterThan(slow.measured["1h"].throughput_tps!);
    // The substitute served one buyer's request before it was caught: too few to say.
    const substituting = list.get(offers.substituting.id)!.measured["1h"];
    expect(substituting).toMatchObject({
      requests: 1 + (await probes(offers.substituting)).sent,
      sources: 2,
      sufficient: false,
      latency_ms: null,
    });

    await refreshOfferQuality();
    // The default is still the cheapest. Between the slow and the fast one, sorting by latency or throughput picks the
    // fast one (the flaky one answers as fast when it answers: latency says nothing of reliability, so it is left out).
    expect(await servedBy()).toBe(offers.slow.id);
    const flakyAside = { ignore: [offers.flaky.id] };
    expect(await servedBy({ ...flakyAside, sort: "latency" })).toBe(offers.fast.id);
    expect(await servedBy({ ...flakyAside, sort: "throughput" })).toBe(offers.fast.id);
    // A soft preference the cheapest misses reorders without excluding: the fast one first; one nobody meets changes nothing.
    expect(await servedBy({ ...flakyAside, preferred_max_latency: binRange(latencyBin(SLOW_MS)).lower / 2 / 1000 })).toBe(offers.fast.id);
    expect(await servedBy({ ...flakyAside, preferred_min_throughput: 1e6 })).toBe(offers.slow.id);
  });

  it("excludes what the buyer excludes, by offer, supplier, declared data policy and quantization", async () => {
    // The flaky upstream fails every 2nd request it gets (probes included): its next one is answered.
    expect(await servedBy({ ignore: [offers.slow.id] })).toBe(offers.flaky.id);
    expect(await servedBy({ ignore: [supplierPublicId(offers.slow.supplierId), offers.flaky.id] })).toBe(offers.fast.id);
    // The flaky offer keeps prompts: data_collection "deny" skips it for the fast one, after the slow one is ignored.
    expect(await servedBy({ ignore: [offers.slow.id], data_collection: "deny" })).toBe(offers.fast.id);
    expect(await servedBy({ quantizations: ["bf16"] })).toBe(offers.fast.id);
    expect(await servedBy({ only: [offers.fast.id, offers.slow.id] })).toBe(offers.slow.id);
  });
});
