/**
 * Prompt caching priced and verified (issue 40), with the clients agents use, over real HTTP (the route handlers
 * behind a node:http server) to reference upstreams that cache prompts: one honest (mode cache: it reports the prefix
 * it saw as prompt_tokens_details.cached_tokens), one that claims none (mode cache-zero). An agent session resends a
 * growing context: after its first turn it is billed its cached tokens at the model's cache-read price and kept on the
 * offer that holds its prefix while that offer's effective price is the best. A supplier that claims no cached tokens
 * on a prefix svc sent it seconds earlier is billed at svc's figure; one that does not declare caching is billed as
 * before. The ledger's invariants hold after each.
 */
import { Agent, OpenAIProvider, Runner, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { assertLedgerInvariants } from "@/lib/ledger/invariants";
import { burnMicroDiem, chargeMicros, formatMicros } from "@/lib/money";
import { sweepExpiredPromptPrefixes } from "@/lib/router/prompt-prefixes";
import { countChatPromptTokens, REPLY_PRIMING_TOKENS } from "@/lib/upstream/tokens";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { startRouteServer, type RouteServer } from "../helpers/route-server";
import { seedBuyer } from "../helpers/router-factories";

const ONE_USDC = 1_000_000n;
/** The model's list prices: 1 diem per 1M input tokens, 0.1 cached (DeepSeek's and Anthropic's ratio), 2 output. */
const PRICES = { inputMicroDiemPerMTok: 1_000_000n, outputMicroDiemPerMTok: 2_000_000n, cacheReadMicroDiemPerMTok: 100_000n };

let honest: ReferenceUpstream;
let claimsNone: ReferenceUpstream;
let app: RouteServer;

beforeAll(async () => {
  setTracingDisabled(true);
  [honest, claimsNone, app] = await Promise.all([
    startReferenceUpstream({ defaultMode: "cache" }),
    startReferenceUpstream({ defaultMode: "cache-zero" }),
    startRouteServer(),
  ]);
});

afterAll(async () => {
  await Promise.all([honest.stop(), claimsNone.stop(), app.stop()]);
});

afterEach(async () => {
  await assertLedgerInvariants();
});

/**
 * An agent's context: instructions and a source file, about 9,000 characters (some 2,500 tokens), the same every turn
 * of a session. Each test's own (its first line names the session): the upstreams' caches are shared by the file.
 */
const context = () =>
  [
    `You are a coding agent on session ${randomUUID()}. Answer briefly. The repository's main module follows.`,
    ...Array.from({ length: 220 }, (_, i) => `export function step${i}(x: number): number { return x * ${i} + ${i % 7}; }`),
  ].join("\n");
let CONTEXT = context();
beforeEach(() => {
  CONTEXT = context();
});

async function cachingModel() {
  return seedPrivateModel({ ...PRICES, supportsTools: false });
}

function offerOn(upstream: ReferenceUpstream, modelId: string, priceCents: number, caching?: { retentionSeconds: number }) {
  return seedOffer({
    models: [{ id: modelId, upstreamModel: "llama-3.3-70b" }],
    priceCents,
    dailyCapacityMicroDiem: 1_000_000_000n,
    upstreamBaseUrl: upstream.url,
    upstreamApiKey: upstream.apiKey,
    caching,
  });
}

const client = (key: string, version: "v1" | "v2" = "v1") => new OpenAI({ baseURL: `${app.url}/${version}`, apiKey: key, maxRetries: 0 });

type Turn = {
  id: string;
  offerId: string;
  prompt: number;
  completion: number;
  cached: number | null;
  claimed: number | null;
  charge: bigint;
  price: number;
};

/** A completion as its clear recorded it. */
async function recorded(id: string): Promise<Turn> {
  const c = await db.completion.findUniqueOrThrow({ where: { id }, include: { clear: true } });
  return {
    id,
    offerId: c.offerId,
    prompt: c.promptTokens,
    completion: c.completionTokens,
    cached: c.cachedTokens,
    claimed: c.claimedCachedTokens,
    charge: c.clear!.chargeMicros,
    price: c.clear!.priceCents,
  };
}

/** What a turn costs with its cached tokens at the cache-read price, and what it would cost with none. */
function costs(t: Turn) {
  return {
    cached: chargeMicros(burnMicroDiem(t.prompt, t.completion, PRICES, t.cached ?? 0), t.price),
    full: chargeMicros(burnMicroDiem(t.prompt, t.completion, PRICES), t.price),
  };
}

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** One turn of a session through the openai SDK: the whole context resent, the answer appended to it. */
async function turn(openai: OpenAI, model: string, messages: Message[], question: string, extra: Record<string, unknown> = {}) {
  messages.push({ role: "user", content: question });
  const { data, response } = await openai.chat.completions
    .create({ model, messages, max_tokens: 40, ...extra } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming)
    .withResponse();
  messages.push({ role: "assistant", content: data.choices[0].message.content ?? "" });
  const id = response.headers.get("x-svc-generation-id")!;
  return { data, turn: await recorded(id) };
}

describe("an agent session through the openai SDK", () => {
  it("is billed its cached tokens at the cache price after the first turn, and stays on the offer that caches it", async () => {
    const model = await cachingModel();
    const caching = await offerOn(honest, model.id, 100, { retentionSeconds: 300 });
    const buyer = await seedBuyer(5n * ONE_USDC);
    const openai = client(buyer.key);
    const messages: Message[] = [{ role: "system", content: CONTEXT }];

    const first = await turn(openai, model.id, messages, "What does step3 return for 2?");
    expect(first.turn.offerId).toBe(caching.id);
    expect(first.turn.cached).toBe(0);

    // A cheaper offer that does not cache arrives: 95 cents against 100, but the cached prefix makes the caching
    // offer's effective price for this session a fraction of it.
    const cheaper = await offerOn(honest, model.id, 95);
    const turns = [first.turn];
    for (const question of ["And step4?", "Add a step220.", "Now write a test for it."]) {
      const { data, turn: t } = await turn(openai, model.id, messages, question);
      expect(t.offerId).toBe(caching.id);
      expect(t.cached).toBeGreaterThan(countChatPromptTokens([{ role: "system", content: CONTEXT }]) - REPLY_PRIMING_TOKENS - 1);
      expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(t.cached);
      const details = (data.usage as unknown as { cost_details: Record<string, unknown> }).cost_details;
      expect(details.billed_cached_tokens).toBe(t.cached);
      expect(details.claimed_cached_tokens).toBe(t.claimed);
      expect(t.charge).toBe(costs(t).cached);
      expect(t.charge * 3n).toBeLessThan(costs(t).full);
      turns.push(t);
    }
    const total = turns.reduce((n, t) => n + t.charge, 0n);
    const uncached = turns.reduce((n, t) => n + costs(t).full, 0n);
    console.log(
      `prompt caching, openai SDK session of ${turns.length} turns: ${formatMicros(total)} USDC, ${formatMicros(uncached)} USDC without caching`,
    );
    expect(total * 2n).toBeLessThan(uncached);

    // The generation record says what the answer said.
    const generation = await fetch(`${app.url}/v1/generations/${turns[1].id}`, { headers: { authorization: `Bearer ${buyer.key}` } });
    const record = (await generation.json()) as {
      usage: { prompt_tokens_details?: { cached_tokens: number }; cost_details: Record<string, unknown> };
    };
    expect(record.usage.prompt_tokens_details?.cached_tokens).toBe(turns[1].cached);
    expect(record.usage.cost_details.billed_cached_tokens).toBe(turns[1].cached);

    // cache_affinity: false routes by posted price: the cheaper offer, every prompt token at the input price.
    const off = await turn(openai, model.id, messages, "One more.", { provider: { cache_affinity: false } });
    expect(off.turn.offerId).toBe(cheaper.id);
    expect(off.turn.cached).toBeNull();
    expect(off.turn.charge).toBe(costs(off.turn).full);
  });

  it("streams the cached tokens in the usage of a /v2 stream", async () => {
    const model = await cachingModel();
    const caching = await offerOn(honest, model.id, 100, { retentionSeconds: 300 });
    const buyer = await seedBuyer(5n * ONE_USDC);
    const messages: Message[] = [{ role: "system", content: CONTEXT }];
    await turn(client(buyer.key), model.id, messages, "What does step3 return for 2?");

    messages.push({ role: "user", content: "And step4?" });
    const stream = await client(buyer.key, "v2").chat.completions.create({
      model: model.id,
      messages,
      max_tokens: 40,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: OpenAI.CompletionUsage | undefined;
    let text = "";
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
    expect(cached).toBeGreaterThan(0);
    const last = await db.completion.findFirstOrThrow({ where: { accountId: buyer.id }, orderBy: { createdAt: "desc" } });
    expect(last).toMatchObject({ offerId: caching.id, streamed: true, cachedTokens: cached });
  });
});

describe("an agent session through the OpenAI Agents SDK (the Responses API)", () => {
  it("bills the turns after the first at the cache price, on the offer that caches the prefix", async () => {
    const model = await cachingModel();
    const caching = await offerOn(honest, model.id, 100, { retentionSeconds: 300 });
    const buyer = await seedBuyer(5n * ONE_USDC);
    const agent = new Agent({ name: "Coder", instructions: CONTEXT, model: model.id });
    const runner = new Runner({ modelProvider: new OpenAIProvider({ apiKey: buyer.key, baseURL: `${app.url}/v1`, useResponses: true }) });

    let result = await runner.run(agent, "What does step3 return for 2?");
    await offerOn(honest, model.id, 95);
    for (const question of ["And step4?", "Add a step220."]) {
      result = await runner.run(agent, [...result.history, { role: "user", content: question }]);
      expect(result.finalOutput).toBeTruthy();
    }
    const rows = await db.completion.findMany({ where: { accountId: buyer.id }, orderBy: { createdAt: "asc" }, include: { clear: true } });
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.offerId === caching.id)).toBe(true);
    expect(rows[0].cachedTokens).toBe(0);
    for (const r of rows.slice(1)) expect(r.cachedTokens).toBeGreaterThan(0);
    const turns = await Promise.all(rows.map((r) => recorded(r.id)));
    for (const t of turns) expect(t.charge).toBe(costs(t).cached);
    const total = turns.reduce((n, t) => n + t.charge, 0n);
    const uncached = turns.reduce((n, t) => n + costs(t).full, 0n);
    console.log(
      `prompt caching, Agents SDK session of ${turns.length} turns: ${formatMicros(total)} USDC, ${formatMicros(uncached)} USDC without caching`,
    );
    expect(total).toBeLessThan(uncached);
  });
});

describe("what svc verifies", () => {
  it("bills a supplier that claims no cached tokens on a prefix svc sent it seconds earlier at svc's own figure", async () => {
    const model = await cachingModel();
    const offer = await offerOn(claimsNone, model.id, 100, { retentionSeconds: 300 });
    const buyer = await seedBuyer(5n * ONE_USDC);
    const openai = client(buyer.key);
    const messages: Message[] = [{ role: "system", content: CONTEXT }];
    await turn(openai, model.id, messages, "What does step3 return for 2?");
    const { data, turn: t } = await turn(openai, model.id, messages, "And step4?");

    // svc's figure: its own count of the prefix it sent (the context, the first message end past 4,096 characters).
    const sent = countChatPromptTokens([{ role: "system", content: CONTEXT }]) - REPLY_PRIMING_TOKENS;
    expect(t).toMatchObject({ offerId: offer.id, claimed: 0, cached: sent });
    const details = (data.usage as unknown as { cost_details: Record<string, unknown> }).cost_details;
    expect(details).toMatchObject({ claimed_cached_tokens: 0, billed_cached_tokens: sent });
    expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(sent);
    expect(t.charge).toBe(costs(t).cached);
    expect(t.charge).toBeLessThan(costs(t).full);
  });

  it("bills an offer that does not declare caching as before, whatever its upstream reports", async () => {
    const model = await cachingModel();
    const offer = await offerOn(honest, model.id, 100);
    const buyer = await seedBuyer(5n * ONE_USDC);
    const openai = client(buyer.key);
    const messages: Message[] = [{ role: "system", content: CONTEXT }];
    await turn(openai, model.id, messages, "What does step3 return for 2?");
    const { data, turn: t } = await turn(openai, model.id, messages, "And step4?");

    expect(t).toMatchObject({ offerId: offer.id, cached: null });
    expect(t.claimed).toBeGreaterThan(0);
    // The upstream's report is passed on as it always was; nothing is billed at the cache price.
    expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(t.claimed);
    expect((data.usage as unknown as { cost_details: Record<string, unknown> }).cost_details.billed_cached_tokens).toBeNull();
    expect(t.charge).toBe(costs(t).full);
    expect(await db.promptPrefix.count({ where: { offerId: offer.id } })).toBe(0);
  });

  it("keeps a prefix for its offer's retention, and no longer", async () => {
    const model = await cachingModel();
    const offer = await offerOn(claimsNone, model.id, 100, { retentionSeconds: 60 });
    const buyer = await seedBuyer(5n * ONE_USDC);
    const messages: Message[] = [{ role: "system", content: CONTEXT }];
    await turn(client(buyer.key), model.id, messages, "What does step3 return for 2?");
    const kept = await db.promptPrefix.findMany({ where: { offerId: offer.id } });
    expect(kept).toHaveLength(1);
    expect(kept[0].expiresAt.getTime() - kept[0].sentAt.getTime()).toBe(60_000);

    await sweepExpiredPromptPrefixes(new Date(kept[0].expiresAt.getTime() - 1));
    expect(await db.promptPrefix.count({ where: { offerId: offer.id } })).toBe(1);
    await sweepExpiredPromptPrefixes(new Date(kept[0].expiresAt.getTime() + 1));
    expect(await db.promptPrefix.count({ where: { offerId: offer.id } })).toBe(0);
  });
});
