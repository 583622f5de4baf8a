/**
 * Billing rules that match the answer (issue 27, items 8 and 9), through the route: the tolerance is proportional
 * (an empty reply is billed no completion tokens, a short prompt at most twice our count), tool calls nobody offered
 * tools for are not billed, and hidden reasoning is paid when the buyer asked for it on a model that bills it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as modelsRoute } from "@/app/v1/models/route";
import { db } from "@/lib/db";
import { clearMarketCache } from "@/lib/market/cache";
import { burnMicroDiem, chargeMicros } from "@/lib/money";
import { allowedClaim } from "@/lib/router/metering";
import { countPromptTokens, countReplyTokens } from "@/lib/upstream/tokens";
import { completion, startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { jsonRequest } from "../helpers/http";
import { seedMarketOn } from "../helpers/market-factories";
import { buyerBalance, callCompletions, seedBuyer } from "../helpers/router-factories";

const ONE_USDC = 1_000_000n;

let canned: CannedUpstream;
beforeAll(async () => {
  canned = await startCannedUpstream();
});
afterAll(() => canned.stop());

const market = (options: { tools?: boolean; billsReasoning?: boolean } = {}) => seedMarketOn(canned, options);

const usage = (prompt: number, completionTokens: number, reasoning?: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completionTokens,
  total_tokens: prompt + completionTokens,
  ...(reasoning !== undefined && { completion_tokens_details: { reasoning_tokens: reasoning } }),
});

async function billed(res: Response) {
  expect(res.status).toBe(200);
  const data = await res.json();
  const row = await db.completion.findUniqueOrThrow({ where: { id: data.id }, include: { clear: true } });
  return { data, row, charge: row.clear!.chargeMicros };
}

describe("the usage tolerance", () => {
  it("is proportional: an empty reply claimed as 83 + 64 tokens against our count of about 15 + 0 is billed our count + 0, and disputed", async () => {
    const { model, offer } = await market();
    const buyer = await seedBuyer(ONE_USDC);
    const body = { model: model.id, messages: [{ role: "user", content: "Please reply with nothing at all." }], max_tokens: 100 };
    const ours = await countPromptTokens(body as never);
    expect(ours).toBeLessThan(16);
    canned.answer({ status: 200, body: completion({ content: "" }, usage(83, 64)) });

    const { data, row, charge } = await billed(await callCompletions(buyer.key, body));

    expect(data.usage).toMatchObject({ prompt_tokens: ours, completion_tokens: 0 });
    expect(row).toMatchObject({
      promptTokens: ours,
      completionTokens: 0,
      claimedPromptTokens: 83,
      claimedCompletionTokens: 64,
      usageDisputed: true,
    });
    expect(charge).toBe(chargeMicros(burnMicroDiem(ours, 0, model), 100));
    expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC - charge, held: 0n });
    // Within bounds, so no health failure: a dispute is the supplier's mark, not a cooldown.
    expect((await db.offer.findUniqueOrThrow({ where: { id: offer.id } })).consecutiveFailures).toBe(0);

    // An empty reply is billed no completion tokens even when the claim for it is small; a prompt claim up to the
    // tolerance (twice a short count) is billed as claimed and is no dispute.
    expect(allowedClaim(ours)).toBe(2 * ours);
    canned.answer({ status: 200, body: completion({ content: null }, usage(2 * ours, 1)) });
    const second = await billed(await callCompletions(buyer.key, body));
    expect(second.data.usage).toMatchObject({ prompt_tokens: 2 * ours, completion_tokens: 0 });
    expect(second.row.usageDisputed).toBe(true); // 1 completion token claimed for nothing
  });

  it("bills a claim within 25% of a long count as claimed, and one beyond it at our count", async () => {
    const { model } = await market();
    const buyer = await seedBuyer(ONE_USDC);
    const body = { model: model.id, messages: [{ role: "user", content: "Tell me about the sea. ".repeat(40) }], max_tokens: 200 };
    const reply = "The sea is large, salty and old; it covers most of the planet and holds most of its life. ".repeat(3);
    const ours = { prompt: await countPromptTokens(body as never), completion: await countReplyTokens({ content: reply }) };
    expect(ours.prompt).toBeGreaterThan(64);
    canned.answer({ status: 200, body: completion({ content: reply }, usage(allowedClaim(ours.prompt), allowedClaim(ours.completion))) });
    const within = await billed(await callCompletions(buyer.key, body));
    expect(within.data.usage).toMatchObject({ prompt_tokens: allowedClaim(ours.prompt), completion_tokens: allowedClaim(ours.completion) });
    expect(within.row.usageDisputed).toBe(false);
    expect(allowedClaim(ours.prompt)).toBe(ours.prompt + Math.ceil(ours.prompt / 4));

    canned.answer({ status: 200, body: completion({ content: reply }, usage(allowedClaim(ours.prompt) + 1, ours.completion)) });
    const beyond = await billed(await callCompletions(buyer.key, body));
    expect(beyond.data.usage).toMatchObject({ prompt_tokens: ours.prompt, completion_tokens: ours.completion });
    expect(beyond.row.usageDisputed).toBe(true);
  });
});

describe("tool calls", () => {
  const weather = {
    id: "call_1",
    type: "function",
    function: { name: "get_weather", arguments: JSON.stringify({ city: "Paris", unit: "celsius", days: 7, detail: "hourly" }) },
  };

  it("in an answer to a request that sent no tools are not billed; with tools they are", async () => {
    const { model } = await market({ tools: true });
    const buyer = await seedBuyer(ONE_USDC);
    const message = { content: "Sure.", tool_calls: [weather] };
    const full = await countReplyTokens(message as never);
    const text = await countReplyTokens({ content: "Sure." });
    const body = { model: model.id, messages: [{ role: "user", content: "Weather in Paris?" }], max_tokens: 100 };
    const prompt = await countPromptTokens(body as never);
    canned.answer({ status: 200, body: completion(message, usage(prompt, full)) });

    const untooled = await billed(await callCompletions(buyer.key, body));
    expect(untooled.data.choices[0].message.tool_calls).toHaveLength(1); // the buyer still sees what came back
    expect(untooled.data.usage.completion_tokens).toBe(text);
    expect(untooled.row.usageDisputed).toBe(true);

    const tools = [
      { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
    ];
    const tooledBody = { ...body, tools };
    canned.answer({ status: 200, body: completion(message, usage(await countPromptTokens(tooledBody as never), full)) });
    const tooled = await billed(await callCompletions(buyer.key, tooledBody));
    expect(tooled.data.usage.completion_tokens).toBe(full);
    expect(tooled.row.usageDisputed).toBe(false);
  });
});

describe("hidden reasoning", () => {
  const four = { content: "Four." };

  it("is paid as claimed when the buyer asks for it on a model that bills it, up to max_tokens; otherwise disputed as before", async () => {
    const { model, offer } = await market({ billsReasoning: true });
    const buyer = await seedBuyer(ONE_USDC);
    const body = { model: model.id, messages: [{ role: "user", content: "What is two plus two? Think hard." }], max_tokens: 5_000 };
    const prompt = await countPromptTokens(body as never);
    const visible = await countReplyTokens(four);
    canned.answer({ status: 200, body: completion(four, usage(prompt, 4_000, 3_998)) });

    // Asked for (reasoning_effort), on a model that bills it: 4,000 completion tokens, as claimed.
    const asked = await billed(await callCompletions(buyer.key, { ...body, reasoning_effort: "high" }));
    expect(asked.data.usage).toEqual({
      prompt_tokens: prompt,
      completion_tokens: 4_000,
      total_tokens: prompt + 4_000,
      completion_tokens_details: { reasoning_tokens: 3_998 },
      // What it cost (tests/integration/generations.test.ts holds these to the ledger).
      cost: expect.any(Number),
      cost_details: expect.objectContaining({ usage_estimated: false }),
    });
    expect(asked.row.usageDisputed).toBe(false);
    expect(asked.charge).toBe(chargeMicros(burnMicroDiem(prompt, 4_000, model), 100));
    expect(canned.received.at(-1)!.body).toMatchObject({ max_tokens: 5_000, reasoning_effort: "high" });
    // Buyers can see which models bill reasoning.
    clearMarketCache();
    const listed = (await (await modelsRoute(jsonRequest("GET", "/v1/models"))).json()) as {
      data: { id: string; bills_reasoning: boolean }[];
    };
    expect(listed.data.find((m) => m.id === model.id)?.bills_reasoning).toBe(true);

    // Not asked for (no reasoning_effort, or "none"): our count of what came back, and a dispute, as before.
    for (const extra of [{}, { reasoning_effort: "none" }]) {
      const unasked = await billed(await callCompletions(buyer.key, { ...body, ...extra }));
      expect(unasked.data.usage).toMatchObject({ prompt_tokens: prompt, completion_tokens: visible });
      expect(unasked.row.usageDisputed).toBe(true);
    }

    // Beyond the request's bound (the max_tokens forwarded): our count, a dispute and a health failure.
    canned.answer({ status: 200, body: completion(four, usage(prompt, 5_001, 4_999)) });
    const beyond = await billed(await callCompletions(buyer.key, { ...body, reasoning_effort: "high" }));
    expect(beyond.data.usage.completion_tokens).toBe(visible);
    expect(beyond.row.usageDisputed).toBe(true);
    expect((await db.offer.findUniqueOrThrow({ where: { id: offer.id } })).consecutiveFailures).toBe(1);
    expect(await buyerBalance(buyer.id)).toMatchObject({ held: 0n });

    // On a model that does not bill reasoning, asking for it changes nothing: our count, a dispute.
    const plain = await market({ billsReasoning: false });
    const plainBody = { ...body, model: plain.model.id, reasoning_effort: "high" };
    canned.answer({ status: 200, body: completion(four, usage(prompt, 4_000, 3_998)) });
    const { data, row } = await billed(await callCompletions(buyer.key, plainBody));
    expect(data.usage.completion_tokens).toBe(visible);
    expect(row.usageDisputed).toBe(true);
  });
});
