/**
 * Billing rules that match the answer (issue 27, items 8 and 9), through the route: the tolerance is proportional
 * (an empty reply is billed no completion tokens, a short prompt at most twice our count), tool calls nobody offered
 * tools for are not billed, and hidden reasoning is paid when the buyer asked for it on a model that bills it, as far
 * as its budget and the answer make it plausible (issue 34).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as modelsRoute } from "@/app/v1/models/route";
import { db } from "@/lib/db/client";
import { clearMarketCache } from "@/lib/market/cache";
import { burnMicroDiem, chargeMicros } from "@/lib/money";
import { allowedClaim, defaultReasoningBudget, REASONING_TOKENS_PER_ANSWER_TOKEN } from "@/lib/upstream/metering";
import { countPromptTokens, countReplyTokens, promptMaterial, tokenBounds } from "@/lib/upstream/tokens";
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
  const question = [{ role: "user", content: "What is two plus two? Think hard." }];

  /** An upstream that claims reasoning for all the room max_tokens leaves (the finding), and what it was sent. */
  function padReasoning(visible: number, prompt: number) {
    canned.answer((body) => {
      const room = Number(body.max_tokens);
      return { status: 200, body: completion(four, usage(prompt, room, room - visible)) };
    });
  }

  async function offerState(offerId: string) {
    return db.offer.findUniqueOrThrow({ where: { id: offerId }, select: { consecutiveFailures: true, lastFailureReason: true } });
  }

  it("claimed at max_tokens for a trivial answer is disputed, billed at the bound, and counts against the offer's health", async () => {
    const { model, offer } = await market({ billsReasoning: true });
    const buyer = await seedBuyer(ONE_USDC);
    // The SDK's defaults: no max_tokens, no budget; reasoning_effort high.
    const body = { model: model.id, messages: question, reasoning_effort: "high" };
    const prompt = await countPromptTokens(body as never);
    const visible = await countReplyTokens(four);
    padReasoning(visible, prompt);

    const { data, row, charge } = await billed(await callCompletions(buyer.key, body));

    // Forwarded: the model's cap (the visible cap, since none was sent), and the effort.
    expect(canned.received.at(-1)!.body).toMatchObject({ max_tokens: 8_192, reasoning_effort: "high" });
    const bound = defaultReasoningBudget("high");
    expect(bound).toBe(2_048);
    expect(data.usage).toMatchObject({
      prompt_tokens: prompt,
      completion_tokens: visible + bound,
      completion_tokens_details: { reasoning_tokens: bound },
      cost_details: {
        billed_completion_tokens: visible + bound,
        claimed_completion_tokens: 8_192,
        billed_reasoning_tokens: bound,
        claimed_reasoning_tokens: 8_192 - visible,
        usage_disputed: true,
      },
    });
    expect(row).toMatchObject({ usageDisputed: true, reasoningTokens: bound, claimedReasoningTokens: 8_192 - visible });
    expect(charge).toBe(chargeMicros(burnMicroDiem(prompt, visible + bound, model), 100));
    expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC - charge, held: 0n });
    const health = await offerState(offer.id);
    expect(health.consecutiveFailures).toBe(1);
    expect(health.lastFailureReason).toContain(`usage claim of ${8_192 - visible} reasoning tokens beyond the bound of ${bound}`);

    // A budget the buyer sets does not make a trivial answer's reasoning plausible beyond the effort's default: still the bound.
    const budgeted = await billed(await callCompletions(buyer.key, { ...body, reasoning: { max_tokens: 6_000 } }));
    expect(canned.received.at(-1)!.body).toMatchObject({ max_tokens: 8_192, reasoning_effort: "high" });
    expect(canned.received.at(-1)!.body).not.toHaveProperty("reasoning");
    expect(budgeted.data.usage).toMatchObject({
      completion_tokens: visible + bound,
      completion_tokens_details: { reasoning_tokens: bound },
    });
    expect(budgeted.row.usageDisputed).toBe(true);

    // Nor does the visible reasoning's absence help a claim in completion_tokens without reasoning_tokens: our count, as before.
    canned.answer({ status: 200, body: completion(four, usage(prompt, 8_000)) });
    const unlabelled = await billed(await callCompletions(buyer.key, body));
    expect(unlabelled.data.usage.completion_tokens).toBe(visible);
    expect(unlabelled.row.usageDisputed).toBe(true);
  });

  it("within the budget and what the answer makes plausible is billed as claimed; unasked or on a model that does not bill it, as before", async () => {
    const { model, offer } = await market({ billsReasoning: true });
    const buyer = await seedBuyer(ONE_USDC);
    const body = { model: model.id, messages: question, max_tokens: 5_000 };
    const prompt = await countPromptTokens(body as never);
    const visible = await countReplyTokens(four);

    // Effort low: up to 512 reasoning tokens for any answer, as claimed.
    canned.answer({ status: 200, body: completion(four, usage(prompt, visible + 500, 500)) });
    const low = await billed(await callCompletions(buyer.key, { ...body, reasoning_effort: "low" }));
    expect(low.data.usage).toMatchObject({ completion_tokens: visible + 500, completion_tokens_details: { reasoning_tokens: 500 } });
    expect(low.row).toMatchObject({ usageDisputed: false, reasoningTokens: 500, claimedReasoningTokens: 500 });
    expect(low.charge).toBe(chargeMicros(burnMicroDiem(prompt, visible + 500, model), 100));

    // A long answer makes long reasoning plausible (32 tokens per answer token) within the buyer's budget.
    const essay = { content: "Two and two make four, as counting on fingers shows. ".repeat(12) };
    const essayTokens = await countReplyTokens(essay);
    const reasoning = Math.min(essayTokens * REASONING_TOKENS_PER_ANSWER_TOKEN, 4_000);
    expect(reasoning).toBeGreaterThan(defaultReasoningBudget("medium"));
    canned.answer({ status: 200, body: completion(essay, usage(prompt, essayTokens + reasoning, reasoning)) });
    const long = await billed(await callCompletions(buyer.key, { ...body, reasoning: { effort: "medium", max_tokens: 4_000 } }));
    expect(canned.received.at(-1)!.body).toMatchObject({ max_tokens: 8_192, reasoning_effort: "medium" });
    expect(long.data.usage).toMatchObject({
      completion_tokens: essayTokens + reasoning,
      completion_tokens_details: { reasoning_tokens: reasoning },
    });
    expect(long.row.usageDisputed).toBe(false);

    // max_completion_tokens (OpenAI's: answer and reasoning together) is the budget when reasoning.max_tokens is not sent.
    canned.answer({ status: 200, body: completion(four, usage(prompt, 600, 600 - visible)) });
    const whole = await billed(
      await callCompletions(buyer.key, { model: model.id, messages: question, max_completion_tokens: 600, reasoning_effort: "high" }),
    );
    expect(canned.received.at(-1)!.body).toMatchObject({ max_tokens: 600 });
    expect(whole.data.usage).toMatchObject({ completion_tokens: 600, completion_tokens_details: { reasoning_tokens: 600 - visible } });
    expect(whole.row.usageDisputed).toBe(false);
    expect((await offerState(offer.id)).consecutiveFailures).toBe(0);

    // reasoning.exclude: the visible reasoning is left out of the answer, and still billed.
    const shown = { content: "Four.", reasoning_content: "Two plus two: add one twice to two." };
    const shownTokens = await countReplyTokens(shown);
    canned.answer({ status: 200, body: completion(shown, usage(prompt, shownTokens, 0)) });
    const excluded = await billed(await callCompletions(buyer.key, { ...body, reasoning: { enabled: true, exclude: true } }));
    expect(canned.received.at(-1)!.body).toMatchObject({ reasoning_effort: "medium" });
    expect(excluded.data.choices[0].message).toEqual({ role: "assistant", content: "Four." });
    expect(excluded.data.usage.completion_tokens).toBe(shownTokens);

    // Not asked for (no reasoning_effort, "none", or reasoning disabled): our count of what came back, and a dispute, as before.
    canned.answer({ status: 200, body: completion(four, usage(prompt, 4_000, 3_998)) });
    for (const extra of [{}, { reasoning_effort: "none" }, { reasoning: { enabled: false } }]) {
      const unasked = await billed(await callCompletions(buyer.key, { ...body, ...extra }));
      expect(canned.received.at(-1)!.body).toMatchObject({ max_tokens: 5_000 });
      expect(unasked.data.usage).toMatchObject({ prompt_tokens: prompt, completion_tokens: visible });
      expect(unasked.row.usageDisputed).toBe(true);
    }
    // Buyers can see which models bill reasoning.
    clearMarketCache();
    const listed = (await (await modelsRoute(jsonRequest("GET", "/v1/models"))).json()) as {
      data: { id: string; bills_reasoning: boolean }[];
    };
    expect(listed.data.find((m) => m.id === model.id)?.bills_reasoning).toBe(true);

    // On a model that does not bill reasoning, asking for it changes nothing: our count, a dispute, max_tokens as sent.
    const plain = await market({ billsReasoning: false });
    const { data, row } = await billed(await callCompletions(buyer.key, { ...body, model: plain.model.id, reasoning_effort: "high" }));
    expect(canned.received.at(-1)!.body).toMatchObject({ max_tokens: 5_000, reasoning_effort: "high" });
    expect(data.usage.completion_tokens).toBe(visible);
    expect(row.usageDisputed).toBe(true);
  });

  it("is reserved as the visible cap plus the reasoning budget (the default when none is sent), never the model's cap for asking", async () => {
    const { model } = await market({ billsReasoning: true });
    const buyer = await seedBuyer(ONE_USDC);
    const cases: [Record<string, unknown>, number][] = [
      [{ max_tokens: 100, reasoning_effort: "medium" }, 100 + defaultReasoningBudget("medium")],
      [{ max_tokens: 100, reasoning_effort: "minimal" }, 100 + defaultReasoningBudget("minimal")],
      [{ max_tokens: 100, reasoning: { max_tokens: 300 } }, 400],
      [{ max_completion_tokens: 700, reasoning_effort: "high" }, 700],
      [{ max_tokens: 100 }, 100],
      [{ reasoning_effort: "high" }, 8_192],
    ];
    for (const [extra, output] of cases) {
      const body = { model: model.id, messages: question, ...extra };
      const reservedPrompt = allowedClaim(tokenBounds(promptMaterial(body as never)).upper);
      let held: { burnMicroDiem: bigint; amountMicros: bigint } | null = null;
      canned.answer(async () => {
        held = await db.hold.findFirstOrThrow({
          where: { accountId: buyer.id, status: "active" },
          select: { burnMicroDiem: true, amountMicros: true },
        });
        return { status: 200, body: completion(four, usage(5, 2)) };
      });
      await billed(await callCompletions(buyer.key, body));
      expect(canned.received.at(-1)!.body!.max_tokens, JSON.stringify(extra)).toBe(output);
      const burn = burnMicroDiem(reservedPrompt, output, model);
      expect(held, JSON.stringify(extra)).toEqual({ burnMicroDiem: burn, amountMicros: chargeMicros(burn, 100) });
    }
  });
});
