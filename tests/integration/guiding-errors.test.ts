/**
 * Errors that say what to do next, for the mistakes a newcomer makes first: a base URL without /v1 or with
 * OpenRouter's /api (a JSON 404 naming the /v1 path, over real HTTP through the front door), a model id written as
 * another provider writes it (the catalog id it most likely means), and a 402 that says what its `needed` is.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROVIDER_EXAMPLE } from "@/components/docs/provider-preferences";
import { db } from "@/lib/db/client";
import { suggestModelId } from "@/lib/market/model-suggestion";
import { completion, startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { readError } from "../helpers/http";
import { seedDemoOffers, seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { startRouteServer, type RouteServer } from "../helpers/route-server";
import { buyerBalance, callCompletions, seedBuyer } from "../helpers/router-factories";

let app: RouteServer;
let canned: CannedUpstream;

beforeAll(async () => {
  [app, canned] = await Promise.all([startRouteServer(), startCannedUpstream()]);
});
afterAll(async () => {
  await Promise.all([app.stop(), canned.stop()]);
});

describe("a wrong base URL", () => {
  it.each([
    ["OpenRouter's /api/v1", "POST", "/api/v1/chat/completions", "/v1/chat/completions", "not /api/v1"],
    ["/api without v1", "GET", "/api/models", "/v1/models", "not /api/v1"],
    ["/openai/v1", "POST", "/openai/v1/responses", "/v1/responses", "not /openai/v1"],
    ["no /v1 at all", "POST", "/chat/completions", "/v1/chat/completions", "under /v1"],
    ["no /v1 on the models list", "GET", "/models", "/v1/models", "under /v1"],
    ["no /v1 on the key", "GET", "/key", "/v1/key", "under /v1"],
  ])("%s is a JSON 404 naming the /v1 path", async (_label, method, path, suggested, says) => {
    const res = await fetch(`${app.url}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: method === "POST" ? "{}" : undefined,
    });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const { error } = (await res.json()) as { error: Record<string, string> };
    expect(error).toMatchObject({ code: "not_found", type: "invalid_request_error", did_you_mean: suggested });
    expect(error.message).toContain(says);
    expect(error.message).toContain(`this request is ${suggested}`);
  });

  it("the version twice in the path says so", async () => {
    const res = await fetch(`${app.url}/v1/v1/chat/completions`, { method: "POST", body: "{}" });
    expect(res.status).toBe(404);
    expect((await readError(res)).message).toContain("base URL to end in /v1 once (this request's path is /v1/chat/completions)");
  });

  it("leaves pages and other paths to the app's own 404", async () => {
    for (const path of ["/market/nowhere", "/docs/nothing-here", "/apiary", "/chatter"]) {
      const res = await fetch(`${app.url}${path}`);
      // The test route server's bare 404, standing in for Next's HTML page: the front door did not answer it.
      expect(await res.text(), path).toBe("not found");
    }
  });
});

describe("an unknown model id", () => {
  it("a model written as OpenRouter writes it gets the catalog id it means", async () => {
    const buyer = await seedBuyer(1_000_000n);
    const res = await callCompletions(buyer.key, {
      model: "meta-llama/llama-3.3-70b-instruct",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(res.status).toBe(404);
    const error = await readError(res);
    expect(error).toMatchObject({ code: "model_not_found", param: "model", did_you_mean: "llama-3.3-70b" });
    expect(error.message).toContain('Did you mean "llama-3.3-70b"?');
  });

  it("nothing near gets no suggestion", async () => {
    const buyer = await seedBuyer(1_000_000n);
    const res = await callCompletions(buyer.key, { model: "gpt-4o", messages: [{ role: "user", content: "Hi" }] });
    expect(await readError(res)).toMatchObject({ code: "model_not_found", did_you_mean: null });
  });

  it.each([
    ["meta-llama/llama-3.3-70b-instruct", "llama-3.3-70b"],
    ["meta-llama/Llama-3.3-70B-Instruct:free", "llama-3.3-70b"],
    ["llama3.3-70b", "llama-3.3-70b"],
    ["qwen/qwen3-235b-a22b", "qwen3-235b"],
    ["mistralai/mistral-small-3.1-24b-instruct", null],
    ["Mistral 3.1 24B", "mistral-31-24b"],
    ["venice-uncensord", "venice-uncensored"],
    ["claude-3.5-sonnet", null],
  ])("%s → %s", (wanted, expected) => {
    const catalog = [
      { id: "llama-3.3-70b", name: "Llama 3.3 70B" },
      { id: "qwen3-235b", name: "Qwen3 235B" },
      { id: "mistral-31-24b", name: "Mistral 3.1 24B" },
      { id: "venice-uncensored", name: "Venice Uncensored" },
    ];
    expect(suggestModelId(wanted, catalog)).toBe(expected);
  });
});

describe("a 402 says what it needs", () => {
  async function market() {
    const model = await seedPrivateModel();
    await seedOffer({
      models: [{ id: model.id, upstreamModel: "canned-model" }],
      priceCents: 100,
      dailyCapacityMicroDiem: 100_000_000n,
      upstreamBaseUrl: canned.url,
      upstreamApiKey: canned.apiKey,
    });
    return model;
  }

  it("when the reservation is more than the balance: needed is the reservation, at the offer's price", async () => {
    const model = await market();
    const buyer = await seedBuyer(1_000n);
    // 4,000 output tokens at 2.8 diem per 1M tokens and 100 cents: at least 0.0112 USDC reserved.
    const res = await callCompletions(buyer.key, { model: model.id, messages: [{ role: "user", content: "Hi" }], max_tokens: 4000 });
    expect(res.status).toBe(402);
    const error = await readError(res);
    expect(error).toMatchObject({ code: "insufficient_balance", needed_is: "reservation", available: "0.001000", price_cents: 100 });
    const { needed, reservation } = error as unknown as { needed: string; reservation: string };
    expect(reservation).toBe(needed);
    expect(Number(needed)).toBeGreaterThanOrEqual(0.0112);
    expect(error.message).toContain(`reserves its worst case, ${needed} USDC`);
    expect(await buyerBalance(buyer.id)).toEqual({ balance: 1_000n, held: 0n });
  });

  it("when even the least the request costs is more: needed is that minimum, and the reservation is not claimed", async () => {
    const model = await market();
    const buyer = await seedBuyer(0n);
    const res = await callCompletions(buyer.key, { model: model.id, messages: [{ role: "user", content: "Hi ".repeat(2000) }] });
    expect(res.status).toBe(402);
    const error = await readError(res);
    expect(error).toMatchObject({
      code: "insufficient_balance",
      needed_is: "minimum",
      reservation: null,
      price_cents: null,
      available: "0.000000",
    });
    expect(error.message).toContain("costs at least");
  });
});

describe("a 503 under the request's own provider preferences", () => {
  it("says the offers it counts are those the preferences leave, not that nothing is posted below the max", async () => {
    const model = await seedPrivateModel();
    const offer = (priceCents: number) =>
      seedOffer({
        models: [{ id: model.id, upstreamModel: "canned-model" }],
        priceCents,
        dailyCapacityMicroDiem: 100_000_000n,
        upstreamBaseUrl: canned.url,
        upstreamApiKey: canned.apiKey,
      });
    const [, pricey] = [await offer(80), await offer(95)];
    const buyer = await seedBuyer(1_000_000n);

    const res = await callCompletions(
      buyer.key,
      { model: model.id, messages: [{ role: "user", content: "Hi" }], max_tokens: 16, provider: { only: [pricey.id] } },
      { "x-svc-max-cents": "90" },
    );

    expect(res.status).toBe(503);
    const error = await readError(res);
    expect(error).toMatchObject({ code: "no_offer_at_or_below_max", suggested_max_cents: 95, cheapest_posted_cents: 80 });
    expect(error.message).toContain("that your provider preferences leave (1 of the 2 posted) is posted at or below your max price of 90");
  });
});

describe("the docs' provider-preferences example", () => {
  it("routes on a market posted as the stock dev market's offers are (not a 503)", async () => {
    const model = await seedPrivateModel();
    const offers = await seedDemoOffers(model.id, canned, { upstreamModel: "canned-model" });
    const buyer = await seedBuyer(1_000_000n);
    canned.answer({ status: 200, body: completion({ content: "Hello" }) });

    const res = await callCompletions(buyer.key, {
      model: model.id,
      messages: [{ role: "user", content: "Hello" }],
      max_tokens: 200,
      provider: PROVIDER_EXAMPLE,
    });

    expect(res.status, await res.clone().text()).toBe(200);
    const served = await db.completion.findUniqueOrThrow({ where: { id: res.headers.get("x-svc-generation-id")! } });
    // The one offer that keeps no prompts: the 80-cent fp8 one.
    expect(offers.find((o) => o.id === served.offerId)).toMatchObject({ priceCents: 80, quantization: "fp8", retainsPrompts: false });
  });
});
