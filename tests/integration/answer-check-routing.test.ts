/**
 * Routing by what the checks found (#37). Two offers of a model with tools, on real HTTP upstreams: the cheaper one
 * breaks its tool calls (invalid JSON, a tool nobody sent, arguments its schema refuses, in turn), the other calls them
 * as asked. Once the routing snapshot has enough checked answers, a request with tools moves away from the breaking
 * offer, `provider.sort: "quality"` asks for the lowest error rate, and a request without tools still goes to the
 * cheapest. And `provider.require_verified` routes only to offers whose probes passed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as offersRoute } from "@/app/v1/market/models/[id]/offers/route";
import { db } from "@/lib/db/client";
import { clearMarketCache } from "@/lib/market/cache";
import { ANSWER_CHECK_MIN_CHECKED } from "@/lib/market/quality/answer-checks";
import { refreshOfferQuality } from "@/lib/market/quality/refresh";
import type { ModelOfferList, ModelOfferView } from "@/lib/market/schemas";
import { completion, startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { jsonRequest, readError, routeParams } from "../helpers/http";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { callCompletions, seedBuyer } from "../helpers/router-factories";

const weather = {
  type: "function" as const,
  function: {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: { city: { type: "string" }, days: { type: "integer", minimum: 1 } },
      required: ["city"],
      additionalProperties: false,
    },
  },
};
const BROKEN_CALLS = [
  { name: "get_weather", arguments: '{"city": "Paris"' },
  { name: "get_time", arguments: "{}" },
  { name: "get_weather", arguments: '{"city": 7}' },
];

let breakingUpstream: CannedUpstream;
let goodUpstream: CannedUpstream;
let model: { id: string };
let breaking: { id: string };
let good: { id: string };
let key: string;

/** An upstream answering a request with tools by a tool call (the next of `calls`), and any other with text. */
function toolCaller(upstream: CannedUpstream, calls: { name: string; arguments: string }[]) {
  let n = 0;
  upstream.answer((body) => {
    if (!Array.isArray(body.tools)) return { status: 200, body: completion({ content: "Sunny." }) };
    const call = calls[n++ % calls.length];
    return {
      status: 200,
      body: {
        ...completion({ content: null, tool_calls: [{ id: `call_${n}`, type: "function", function: call }] }),
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: null, tool_calls: [{ id: `call_${n}`, type: "function", function: call }] },
            finish_reason: "tool_calls",
          },
        ],
      },
    };
  });
}

async function servedBy(body: Record<string, unknown>): Promise<string> {
  const res = await callCompletions(
    key,
    { model: model.id, messages: [{ role: "user", content: "Weather in Paris?" }], max_tokens: 50, ...body },
    { "x-svc-max-cents": "200" },
  );
  expect(res.status).toBe(200);
  return (await db.completion.findUniqueOrThrow({ where: { id: res.headers.get("x-svc-generation-id")! } })).offerId;
}

async function published(): Promise<Map<string, ModelOfferView>> {
  clearMarketCache();
  const res = await offersRoute(jsonRequest("GET", `/v1/market/models/${model.id}/offers`), routeParams({ id: model.id }));
  return new Map(((await res.json()) as ModelOfferList).data.map((o) => [o.id, o]));
}

beforeAll(async () => {
  [breakingUpstream, goodUpstream] = await Promise.all([startCannedUpstream(), startCannedUpstream()]);
  toolCaller(breakingUpstream, BROKEN_CALLS);
  toolCaller(goodUpstream, [{ name: "get_weather", arguments: '{"city": "Paris", "days": 2}' }]);
  model = await seedPrivateModel({ supportsTools: true });
  const on = (upstream: CannedUpstream, priceCents: number) =>
    seedOffer({
      models: [{ id: model.id, upstreamModel: "canned-model" }],
      priceCents,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
      features: { tools: true },
    });
  breaking = await on(breakingUpstream, 80);
  good = await on(goodUpstream, 100);
  ({ key } = await seedBuyer(100_000_000n));
});

afterAll(async () => {
  await db.offer.updateMany({ where: { id: { in: [breaking.id, good.id] } }, data: { status: "withdrawn" } });
  await Promise.all([breakingUpstream.stop(), goodUpstream.stop()]);
});

describe("routing by answer checks", () => {
  it("counts each broken tool call in its bucket, then routes tool calls away from the offer that breaks them", async () => {
    // Cheapest first: the breaking offer takes tool calls until the checks have said enough.
    expect(await servedBy({ tools: [weather] })).toBe(breaking.id);
    const broken = Math.ceil(ANSWER_CHECK_MIN_CHECKED / BROKEN_CALLS.length) * BROKEN_CALLS.length;
    for (let i = 1; i < broken; i++) await servedBy({ tools: [weather], provider: { only: [breaking.id] } });
    for (let i = 0; i < ANSWER_CHECK_MIN_CHECKED; i++) await servedBy({ tools: [weather], provider: { only: [good.id] } });

    // Counted after each answer was served (off its path): wait for the last.
    await expect
      .poll(async () => (await published()).get(good.id)!.answer_checks.tool_calls.checked, { timeout: 10_000 })
      .toBe(ANSWER_CHECK_MIN_CHECKED);
    await expect.poll(async () => (await published()).get(breaking.id)!.answer_checks.tool_calls.checked, { timeout: 10_000 }).toBe(broken);
    const checks = (await published()).get(breaking.id)!.answer_checks;
    const n = broken / BROKEN_CALLS.length;
    expect(checks.tool_calls).toMatchObject({ failed: broken, invalid_json: n, unknown_tool: n, schema_mismatch: n, error_rate: 1 });
    expect(checks).toMatchObject({ error_rate: 1, demoted: false });
    expect((await published()).get(good.id)!.answer_checks).toMatchObject({ error_rate: 0, demoted: false });

    // The snapshot: its rate (1) stands well above the model's median (0.5); routing reads it.
    await refreshOfferQuality();
    expect((await published()).get(breaking.id)!.answer_checks.demoted).toBe(true);
    expect(await servedBy({ tools: [weather] })).toBe(good.id);
    // Demoted, not excluded: a buyer who pins it still gets it, and a request without tools still goes to the cheapest.
    expect(await servedBy({ tools: [weather], provider: { only: [breaking.id] } })).toBe(breaking.id);
    expect(await servedBy({})).toBe(breaking.id);
    // sort: quality asks for the lowest error rate first, for any request.
    expect(await servedBy({ provider: { sort: "quality" } })).toBe(good.id);
  });

  it("require_verified routes only to offers whose probes passed, and names itself when it leaves none", async () => {
    expect(await servedBy({ provider: { require_verified: false } })).toBe(breaking.id);
    const res = await callCompletions(
      key,
      { model: model.id, messages: [{ role: "user", content: "Hi" }], max_tokens: 8, provider: { require_verified: true } },
      { "x-svc-max-cents": "200" },
    );
    expect(res.status).toBe(503);
    expect(res.headers.get("x-svc-error-code")).toBe("no_offer_matches_provider_require_verified");
    expect(await readError(res)).toMatchObject({ code: "no_offer_matches_provider_require_verified", param: "provider.require_verified" });

    await db.offer.update({ where: { id: good.id }, data: { probeStatus: "passing", probedAt: new Date() } });
    await db.offer.update({ where: { id: breaking.id }, data: { probeStatus: "unverified" } });
    expect(await servedBy({ provider: { require_verified: true } })).toBe(good.id);
    expect(await servedBy({})).toBe(breaking.id);
  });
});
