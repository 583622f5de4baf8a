/**
 * What OpenRouter's and OpenAI's clients send beyond the core chat fields: OpenRouter's sampling fields reach the
 * upstream as sent; the fields svc has no use for are accepted (never a 400 for what a client sends by default), not
 * forwarded, and named in X-Svc-Ignored-Fields; the ones that ask for what svc cannot do are a 400 that says why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as modelsRoute } from "@/app/v1/models/route";
import { POST as responsesRoute } from "@/app/v1/responses/route";
import { POST as chatV2Route } from "@/app/v2/chat/completions/route";
import { db } from "@/lib/db/client";
import { clearMarketCache } from "@/lib/market/cache";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { completion, startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { jsonRequest, readError } from "../helpers/http";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { buyerBalance, callCompletions, seedBuyer } from "../helpers/router-factories";

const ONE_USDC = 1_000_000n;
const hello = { role: "user", content: "Hello" };

let canned: CannedUpstream;

beforeAll(async () => {
  canned = await startCannedUpstream();
});
afterAll(async () => {
  await canned.stop();
});

async function market(priceCents = 100) {
  const model = await seedPrivateModel();
  await seedOffer({
    models: [{ id: model.id, upstreamModel: "canned-model" }],
    priceCents,
    dailyCapacityMicroDiem: 100_000_000n,
    upstreamBaseUrl: canned.url,
    upstreamApiKey: canned.apiKey,
  });
  return model;
}

function callResponses(key: string, body: unknown) {
  return responsesRoute(
    new Request("http://localhost:3000/v1/responses", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    }),
  );
}

/** What an OpenRouter client sends on top of model and messages. */
const OPENROUTER_EXTRAS = {
  models: ["meta-llama/llama-3.3-70b-instruct", "mistralai/mistral-small"],
  route: "fallback",
  transforms: ["middle-out"],
  usage: { include: true },
  top_k: 40,
  min_p: 0.05,
  top_a: 0.1,
  repetition_penalty: 1.1,
};

/** What OpenAI's newer clients send. */
const OPENAI_EXTRAS = {
  service_tier: "auto",
  prompt_cache_key: "conversation-42",
  safety_identifier: "user-hash-1",
  verbosity: "low",
  store: true,
  prediction: { type: "content", content: "Hello" },
  modalities: ["text"],
};

describe("chat completions: OpenRouter's and OpenAI's fields", () => {
  it("forwards top_k, min_p and repetition_penalty as sent, and names what it ignored in X-Svc-Ignored-Fields", async () => {
    const model = await market();
    const buyer = await seedBuyer(ONE_USDC);
    canned.answer({ status: 200, body: completion({ content: "ok" }) });

    const res = await callCompletions(buyer.key, {
      model: model.id,
      messages: [hello],
      max_tokens: 20,
      ...OPENROUTER_EXTRAS,
      ...OPENAI_EXTRAS,
    });

    expect(res.status).toBe(200);
    const forwarded = canned.received.at(-1)!.body as Record<string, unknown>;
    expect(forwarded).toMatchObject({ top_k: 40, min_p: 0.05, repetition_penalty: 1.1 });
    for (const field of ["models", "route", "transforms", "usage", "top_a", ...Object.keys(OPENAI_EXTRAS)]) {
      expect(forwarded, field).not.toHaveProperty(field);
    }
    // usage.include: true asks for what every answer has; modalities ["text"] for what svc serves: neither is ignored.
    expect(res.headers.get("x-svc-ignored-fields")).toBe(
      "models, route, transforms, top_a, service_tier, prompt_cache_key, safety_identifier, verbosity, store, prediction",
    );
    const body = await res.json();
    expect(body.usage.cost).toBeGreaterThan(0);
  });

  it("sends no X-Svc-Ignored-Fields when every field was used, and names usage when include: false is asked", async () => {
    const model = await market();
    const buyer = await seedBuyer(ONE_USDC);
    canned.answer({ status: 200, body: completion({ content: "ok" }) });
    const plain = await callCompletions(buyer.key, { model: model.id, messages: [hello], max_tokens: 20, usage: { include: true } });
    expect(plain.status).toBe(200);
    expect(plain.headers.has("x-svc-ignored-fields")).toBe(false);

    canned.answer({ status: 200, body: completion({ content: "ok" }) });
    const excluded = await callCompletions(buyer.key, { model: model.id, messages: [hello], max_tokens: 20, usage: { include: false } });
    expect(excluded.status).toBe(200);
    expect(excluded.headers.get("x-svc-ignored-fields")).toBe("usage");
    expect((await excluded.json()).usage.cost).toBeGreaterThan(0);
  });

  const refusals: [string, Record<string, unknown>, string, string][] = [
    ["audio output", { modalities: ["text", "audio"], audio: { voice: "alloy", format: "wav" } }, "audio", "text only"],
    ["an audio modality", { modalities: ["audio"] }, "modalities.0", "text only"],
    ["web search", { web_search_options: {} }, "web_search_options", "web search"],
    ["OpenRouter plugins", { plugins: [{ id: "web" }] }, "plugins", "plugins"],
    ["a repetition_penalty of 0", { repetition_penalty: 0 }, "repetition_penalty", "repetition_penalty"],
    ["a fractional top_k", { top_k: 1.5 }, "top_k", "top_k"],
    ["a min_p above 1", { min_p: 2 }, "min_p", "min_p"],
    ["a service tier that does not exist", { service_tier: "gold" }, "service_tier", "service_tier"],
    ["usage with an unknown setting", { usage: { include: true, detail: 1 } }, "usage.detail", "usage.detail"],
  ];
  it.each(refusals)("refuses %s with a 400 naming it, nothing forwarded or held", async (_label, patch, param, says) => {
    const model = await market();
    const buyer = await seedBuyer(ONE_USDC);
    const forwardedBefore = canned.received.length;

    const res = await callCompletions(buyer.key, { model: model.id, messages: [hello], ...patch });

    expect(res.status).toBe(400);
    const error = await readError(res);
    expect(error).toMatchObject({ param });
    expect(error.message).toContain(says);
    expect(canned.received.length).toBe(forwardedBefore);
    expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC, held: 0n });
  });
});

describe("responses: the same fields", () => {
  it("forwards the sampling fields, and names the ignored ones, the Responses API's own included", async () => {
    const model = await market();
    const buyer = await seedBuyer(ONE_USDC);
    canned.answer({ status: 200, body: completion({ content: "ok" }) });

    const res = await callResponses(buyer.key, {
      model: model.id,
      input: "Hello",
      max_output_tokens: 20,
      ...OPENROUTER_EXTRAS,
      service_tier: "flex",
      prompt_cache_key: "k",
      safety_identifier: "s",
      store: false,
      include: ["reasoning.encrypted_content"],
      truncation: "disabled",
      top_logprobs: 2,
      max_tool_calls: 3,
      text: { format: { type: "text" }, verbosity: "high" },
    });

    expect(res.status).toBe(200);
    expect(canned.received.at(-1)!.body).toMatchObject({ top_k: 40, min_p: 0.05, repetition_penalty: 1.1 });
    expect(canned.received.at(-1)!.body).not.toHaveProperty("transforms");
    expect(res.headers.get("x-svc-ignored-fields")).toBe(
      "models, route, transforms, top_a, service_tier, prompt_cache_key, safety_identifier, include, top_logprobs, max_tool_calls, text.verbosity",
    );
    expect((await res.json()).status).toBe("completed");
    expect((await buyerBalance(buyer.id)).held).toBe(0n);
  });
});

describe("GET /v1/models: OpenRouter's pricing, USD per token", () => {
  /** "0.000000595" → 595_000n: USD per token in units of 10^-12 USD (micro-USDC per 1M tokens). */
  const pico = (usd: string) => {
    const [whole, fraction = ""] = usd.split(".");
    return BigInt(whole) * 10n ** 12n + BigInt(fraction.padEnd(12, "0"));
  };

  it("gives prompt and completion beside the diem figures, at the cheapest offer, and a completion costs what they say", async () => {
    const model = await market(85);
    await seedOffer({
      models: [{ id: model.id, upstreamModel: "canned-model" }],
      priceCents: 120,
      dailyCapacityMicroDiem: 100_000_000n,
      upstreamBaseUrl: canned.url,
      upstreamApiKey: canned.apiKey,
    });
    clearMarketCache();
    const listed = (await (await modelsRoute(jsonRequest("GET", "/v1/models"))).json()) as {
      data: { id: string; best_price_cents: number; pricing: Record<string, string | null> }[];
    };
    const entry = listed.data.find((m) => m.id === model.id)!;
    // 0.7 and 2.8 diem per 1M tokens at 85 cents per diem (1 diem at 100 cents is 1 USD).
    expect(entry.best_price_cents).toBe(85);
    expect(entry.pricing).toEqual({
      input_diem_per_mtok: "0.700000",
      output_diem_per_mtok: "2.800000",
      cache_read_diem_per_mtok: null,
      cache_write_diem_per_mtok: null,
      prompt: "0.000000595",
      completion: "0.00000238",
      input_cache_read: null,
      input_cache_write: null,
    });

    const buyer = await seedBuyer(ONE_USDC);
    canned.answer({
      status: 200,
      body: completion({ content: "ok" }, { prompt_tokens: 1400, completion_tokens: 1, total_tokens: 1401 }),
    });
    const res = await callCompletions(buyer.key, {
      model: model.id,
      messages: [{ role: "user", content: "Hello ".repeat(1500) }],
      max_tokens: 5,
    });
    expect(res.status).toBe(200);
    const { usage } = await res.json();
    const charged = (await db.clear.findFirstOrThrow({ where: { completion: { accountId: buyer.id } } })).chargeMicros;
    // tokens × USD per token, to the micro-USDC: the charge rounds up once on the burn and once on the price.
    const predicted =
      (BigInt(usage.prompt_tokens) * pico(entry.pricing.prompt!) + BigInt(usage.completion_tokens) * pico(entry.pricing.completion!)) /
      10n ** 6n;
    expect(charged - predicted).toBeGreaterThanOrEqual(0n);
    expect(charged - predicted).toBeLessThanOrEqual(2n);
    expect(charged).toBeGreaterThan(500n);
  });

  it("gives the list price (100 cents per diem) when nobody sells the model", async () => {
    const model = await seedPrivateModel({ inputMicroDiemPerMTok: 150_000n, outputMicroDiemPerMTok: 0n });
    clearMarketCache();
    const listed = (await (await modelsRoute(jsonRequest("GET", "/v1/models"))).json()) as {
      data: { id: string; best_price_cents: number | null; pricing: Record<string, string> }[];
    };
    const entry = listed.data.find((m) => m.id === model.id)!;
    expect(entry.best_price_cents).toBeNull();
    expect(entry.pricing).toMatchObject({ prompt: "0.00000015", completion: "0" });
  });
});

describe("/v2: the same fields, streamed or not", () => {
  let reference: ReferenceUpstream;
  beforeAll(async () => {
    reference = await startReferenceUpstream();
  });
  afterAll(async () => {
    await reference.stop();
  });

  it("names the ignored fields on a stream's headers too (sent before the first event)", async () => {
    const model = await seedPrivateModel();
    await seedOffer({
      models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
      priceCents: 100,
      dailyCapacityMicroDiem: 100_000_000n,
      upstreamBaseUrl: reference.url,
      upstreamApiKey: reference.apiKey,
    });
    const buyer = await seedBuyer(ONE_USDC);
    const res = await chatV2Route(
      new Request("http://localhost:3000/v2/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${buyer.key}` },
        body: JSON.stringify({ model: model.id, messages: [hello], max_tokens: 20, stream: true, transforms: ["middle-out"], top_k: 5 }),
      }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("x-svc-ignored-fields")).toBe("transforms");
    expect(await res.text()).toContain("data: [DONE]");
  });
});
