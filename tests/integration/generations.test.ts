/**
 * Every cent visible (issue 22): each 200 of POST /v1/chat/completions states in `usage` what it cost (`cost`, and
 * `cost_details` to the micro-unit of its journal entry), carries its generation id, and GET /v1/generations/{id}
 * finds its record for any live key of the account and for its session, and for nobody else. Over real HTTP: the
 * front door and the route handlers (tests/helpers/route-server.ts), a canned upstream whose claimed usage and
 * finish_reason the test draws (seeded: SVC_COST_SEED replays a run).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey, revokeApiKey } from "@/lib/auth/api-keys";
import { createSession } from "@/lib/auth/sessions";
import { db } from "@/lib/db/client";
import { formatMicros } from "@/lib/money";
import { defaultReasoningBudget } from "@/lib/upstream/metering";
import { COMPLETION_ID_PATTERN, type CostDetails, type Generation } from "@/lib/router/schemas";
import { startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { seedAccount } from "../helpers/factories";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { prng } from "../helpers/prng";
import { startRouteServer, type RouteServer } from "../helpers/route-server";
import { seedBuyer } from "../helpers/router-factories";

const USDC = 1_000_000n;
// eslint-disable-next-line no-restricted-properties -- a test's own replay knob, not the app's configuration
const SEED = Number(process.env.SVC_COST_SEED ?? Math.floor(Math.random() * 2 ** 31));

let upstream: CannedUpstream;
let app: RouteServer;

/** What the canned upstream answers for each upstream model name (one per offer), drawn by the test. */
const plans = new Map<string, { content: string; finish: string; usage?: Record<string, unknown> }>();

beforeAll(async () => {
  [upstream, app] = await Promise.all([startCannedUpstream(), startRouteServer()]);
  upstream.answer((body) => {
    const plan = plans.get(String(body.model));
    if (!plan) return { status: 500, body: { error: { message: `no plan for ${String(body.model)}` } } };
    return {
      status: 200,
      body: {
        id: "chatcmpl-upstream",
        object: "chat.completion",
        created: 1,
        model: String(body.model),
        choices: [{ index: 0, message: { role: "assistant", content: plan.content }, finish_reason: plan.finish, logprobs: null }],
        ...(plan.usage && { usage: plan.usage }),
      },
    };
  });
});

afterAll(async () => {
  await Promise.all([upstream?.stop(), app?.stop()]);
});

type ChatAnswer = {
  id: string;
  choices: { finish_reason: string }[];
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    completion_tokens_details?: { reasoning_tokens: number };
    cost: number;
    cost_details: CostDetails;
  };
};

async function chat(key: string, model: string, prompt: string, maxTokens: number, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${app.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "x-svc-max-cents": "10000" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: prompt }], max_tokens: maxTokens, ...extra }),
  });
  const body = (await res.json()) as ChatAnswer;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return { res, body };
}

function lookup(id: string, credentials: { key?: string; cookie?: string }) {
  return fetch(`${app.url}/v1/generations/${encodeURIComponent(id)}`, {
    headers: {
      ...(credentials.key && { authorization: `Bearer ${credentials.key}` }),
      ...(credentials.cookie && { cookie: credentials.cookie }),
    },
  });
}

/** The clear of a completion as the ledger holds it: the clears row and its journal entry's lines by account kind. */
async function ledgerOf(completionId: string) {
  const completion = await db.completion.findUniqueOrThrow({
    where: { id: completionId },
    include: { clear: { include: { journalEntry: { include: { lines: { include: { ledgerAccount: true } } } } } } },
  });
  const clear = completion.clear!;
  const entry = clear.journalEntry!;
  const line = (kind: "buyer" | "supplier" | "platform") =>
    entry.lines.filter((l) => l.ledgerAccount.kind === kind).reduce((sum, l) => sum + l.amountMicros, 0n);
  return { completion, clear, entry, buyer: line("buyer"), supplier: line("supplier"), platform: line("platform") };
}

const WORDS = ["alpha", "beta", "gamma", "delta", "ünïcode", "日本語", "emoji 🚀", "42", "—", "x"];

describe("usage.cost_details", () => {
  it(`equals the journal entry and the clears row to the micro-unit, for random prices and usages (seed ${SEED})`, async () => {
    const rng = prng(SEED);
    const buyers = await Promise.all([seedBuyer(100_000n * USDC), seedBuyer(100_000n * USDC)]);
    const ROUNDS = 6;
    const PER_ROUND = 8; // sent together: the clears share batches
    let disputed = 0;
    let estimated = 0;
    let reasoningBounded = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const cases = await Promise.all(
        Array.from({ length: PER_ROUND }, async (_, i) => {
          const model = await seedPrivateModel({
            inputMicroDiemPerMTok: rng.big(50_000_000n, [1n]) || 1n,
            outputMicroDiemPerMTok: rng.big(50_000_000n, [1n]) || 1n,
            billsReasoning: rng.chance(0.5),
          });
          const upstreamModel = `canned-${round}-${i}-${model.id}`;
          const priceCents = rng.chance(0.25) ? rng.pick([1, 2, 99, 100, 101, 9_999, 10_000]) : rng.int(1, 10_000);
          await seedOffer({
            models: [{ id: model.id, upstreamModel }],
            priceCents,
            dailyCapacityMicroDiem: 1_000_000_000_000n,
            upstreamBaseUrl: upstream.url,
            upstreamApiKey: upstream.apiKey,
          });
          const words = rng.int(1, 60);
          const prompt = Array.from({ length: words }, () => rng.pick(WORDS)).join(" ");
          const content = Array.from({ length: rng.int(0, 40) }, () => rng.pick(WORDS)).join(" ");
          const maxTokens = rng.int(1, 300);
          const claim = rng.pick(["none", "honest", "small", "inflated"] as const);
          // Reasoning asked for (half the models bill it) and claimed: within the completion, or padded far beyond the answer.
          const effort = rng.pick([null, "none", "low", "high"] as const);
          const reasoned = (completionTokens: number) =>
            rng.chance(0.5) ? {} : { completion_tokens_details: { reasoning_tokens: rng.int(0, completionTokens + 5) } };
          const padded = rng.int(0, 3_000);
          const usage =
            claim === "none"
              ? undefined
              : claim === "inflated"
                ? { prompt_tokens: rng.int(5_000, 90_000), completion_tokens: rng.int(0, maxTokens), total_tokens: 0 }
                : claim === "small"
                  ? { prompt_tokens: rng.int(0, 3), completion_tokens: rng.int(0, 3), total_tokens: 0 }
                  : rng.chance(0.3)
                    ? { prompt_tokens: words, completion_tokens: padded + 20, completion_tokens_details: { reasoning_tokens: padded } }
                    : { prompt_tokens: words + rng.int(0, 12), completion_tokens: rng.int(0, Math.min(maxTokens, 80)), total_tokens: 0 };
          if (usage && !("completion_tokens_details" in usage)) Object.assign(usage, reasoned(usage.completion_tokens));
          plans.set(upstreamModel, { content, finish: rng.pick(["stop", "length", "content_filter"]), usage });
          return { model, priceCents, prompt, maxTokens, effort, buyer: buyers[i % 2] };
        }),
      );
      const answers = await Promise.all(
        cases.map((c) => chat(c.buyer.key, c.model.id, c.prompt, c.maxTokens, c.effort ? { reasoning_effort: c.effort } : {})),
      );

      for (const [i, { res, body }] of answers.entries()) {
        const d = body.usage.cost_details;
        const { completion, clear, buyer, supplier, platform } = await ledgerOf(body.id);
        const where = `seed ${SEED}, round ${round}, case ${i}: ${JSON.stringify(body.usage)}`;
        // The journal entry: buyer −charge, supplier +share, platform +fee.
        expect(d.charge, where).toBe(formatMicros(-buyer));
        expect(d.supplier_share, where).toBe(formatMicros(supplier));
        expect(d.platform_fee, where).toBe(formatMicros(platform));
        // The clears row, and the offer that served it.
        expect([d.charge, d.supplier_share, d.platform_fee, d.burn, d.price_cents_per_diem], where).toEqual([
          formatMicros(clear.chargeMicros),
          formatMicros(clear.supplierMicros),
          formatMicros(clear.feeMicros),
          formatMicros(clear.burnMicroDiem),
          clear.priceCents,
        ]);
        expect(d.price_cents_per_diem).toBe(cases[i].priceCents);
        // The number OpenRouter's clients read, the header, and the tokens as the completion row keeps them.
        expect(body.usage.cost, where).toBe(Number(d.charge));
        expect(res.headers.get("x-svc-cost")).toBe(d.charge);
        expect(res.headers.get("x-svc-generation-id")).toBe(body.id);
        expect(body.id).toMatch(COMPLETION_ID_PATTERN);
        expect([d.billed_prompt_tokens, d.billed_completion_tokens, d.claimed_prompt_tokens, d.claimed_completion_tokens], where).toEqual([
          completion.promptTokens,
          completion.completionTokens,
          completion.claimedPromptTokens,
          completion.claimedCompletionTokens,
        ]);
        expect([d.billed_prompt_tokens, d.billed_completion_tokens]).toEqual([body.usage.prompt_tokens, body.usage.completion_tokens]);
        // Reasoning: claimed beside billed, as the row keeps them; billed within the completion tokens, as usage states it.
        expect([d.billed_reasoning_tokens, d.claimed_reasoning_tokens], where).toEqual([
          completion.reasoningTokens,
          completion.claimedReasoningTokens,
        ]);
        expect(body.usage.completion_tokens_details?.reasoning_tokens ?? null, where).toBe(d.billed_reasoning_tokens);
        expect(d.billed_reasoning_tokens ?? 0, where).toBeLessThanOrEqual(d.billed_completion_tokens);
        if (d.billed_reasoning_tokens !== null && d.billed_reasoning_tokens !== d.claimed_reasoning_tokens) reasoningBounded += 1;
        expect([d.usage_estimated, d.usage_disputed]).toEqual([completion.usageEstimated, completion.usageDisputed]);
        expect(completion.finishReason).toBe(body.choices[0].finish_reason);
        expect(completion.totalLatencyMs).toBeGreaterThanOrEqual(completion.latencyMs);
        if (d.usage_disputed) disputed += 1;
        if (d.usage_estimated) estimated += 1;
      }
    }
    // The draw reached the cases that differ: claims billed at svc's count, and answers without usage.
    expect(disputed).toBeGreaterThan(0);
    expect(estimated).toBeGreaterThan(0);
    expect(reasoningBounded).toBeGreaterThan(0);
  });
});

describe("GET /v1/generations/{id}", () => {
  /** A buyer with two keys and a session, one completion made with the first key, and another account. */
  async function world() {
    const model = await seedPrivateModel();
    const upstreamModel = `canned-lookup-${model.id}`;
    plans.set(upstreamModel, { content: "four words of answer", finish: "length", usage: { prompt_tokens: 9, completion_tokens: 5 } });
    const supplier = (await seedAccount()).id;
    const offer = await seedOffer({
      supplierId: supplier,
      models: [{ id: model.id, upstreamModel }],
      priceCents: 85,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
    });
    const buyer = await seedBuyer(10n * USDC, { name: "first" });
    const second = await createApiKey(buyer.id, { name: "second" });
    const { token } = await createSession(buyer.id);
    const other = await seedBuyer(10n * USDC, { name: "stranger" });
    const { token: otherToken } = await createSession(other.id);
    const { res, body } = await chat(buyer.key, model.id, "Say four words", 50);
    return {
      model,
      offer,
      supplier,
      buyer,
      second,
      cookie: `svc_session=${token}`,
      other: { ...other, cookie: `svc_session=${otherToken}` },
      answer: body,
      answerHeaders: res.headers,
    };
  }

  it("is found by the key that made it, another key of the account and its session, with the answer's own figures", async () => {
    const w = await world();
    const id = w.answer.id;
    const seen: Generation[] = [];
    for (const credentials of [{ key: w.buyer.key }, { key: w.second.key }, { cookie: w.cookie }]) {
      const res = await lookup(id, credentials);
      expect(res.status).toBe(200);
      seen.push((await res.json()) as Generation);
    }
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[2]).toEqual(seen[0]);

    const g = seen[0];
    const { clear, entry, completion } = await ledgerOf(id);
    const key = await db.apiKey.findUniqueOrThrow({ where: { id: w.buyer.apiKeyId } });
    expect(g).toMatchObject({
      id,
      object: "generation",
      created_at: completion.createdAt.toISOString(),
      model: w.model.id,
      offer_id: w.offer.id,
      finish_reason: "length",
      usage: w.answer.usage,
      upstream_latency_ms: completion.latencyMs,
      total_latency_ms: completion.totalLatencyMs,
      end: "completed",
      streamed: false,
      key: { id: key.id, name: "first", prefix: key.prefix },
      journal_entry_id: entry.id,
    });
    expect(g.usage.cost_details.charge).toBe(formatMicros(clear.chargeMicros));
    expect(g.upstream_latency_ms).toBeLessThanOrEqual(g.total_latency_ms!);
    expect(w.answer.choices[0].finish_reason).toBe("length");

    // The supplier's public id: a pseudonym, the same for its other offers, another supplier's differs, never its wallet or account.
    expect(g.supplier_id).toMatch(/^sup_[0-9a-f]{24}$/);
    const wallet = (await db.account.findUniqueOrThrow({ where: { id: w.supplier } })).walletAddress.toLowerCase();
    expect(JSON.stringify(g).toLowerCase()).not.toContain(wallet.slice(2));
    expect(JSON.stringify(g)).not.toContain(w.supplier);
    const elsewhere = await world();
    const theirs = (await (await lookup(elsewhere.answer.id, { key: elsewhere.buyer.key })).json()) as Generation;
    expect(theirs.supplier_id).toMatch(/^sup_[0-9a-f]{24}$/);
    expect(theirs.supplier_id).not.toBe(g.supplier_id);
    const sameSupplierModel = await seedPrivateModel();
    const sameSupplierUpstreamModel = `canned-same-${sameSupplierModel.id}`;
    plans.set(sameSupplierUpstreamModel, { content: "ok", finish: "stop" });
    await seedOffer({
      supplierId: w.supplier,
      models: [{ id: sameSupplierModel.id, upstreamModel: sameSupplierUpstreamModel }],
      priceCents: 100,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
    });
    const sameSupplier = await chat(w.buyer.key, sameSupplierModel.id, "hello", 20);
    const sameRecord = (await (await lookup(sameSupplier.body.id, { key: w.second.key })).json()) as Generation;
    expect(sameRecord.supplier_id).toBe(g.supplier_id);
    expect(sameRecord.finish_reason).toBe("stop");
    expect(sameRecord.usage.cost_details.usage_estimated).toBe(true);
  });

  it("shows the reasoning tokens claimed beside those billed, as the answer did", async () => {
    const model = await seedPrivateModel({ billsReasoning: true });
    const upstreamModel = `canned-reasoning-${model.id}`;
    // Reasoning claimed for all the room the forwarded max_tokens (50 + the high effort's budget) leaves a 4-token answer.
    const room = 50 + defaultReasoningBudget("high");
    plans.set(upstreamModel, {
      content: "four words of answer",
      finish: "stop",
      usage: { prompt_tokens: 9, completion_tokens: room, completion_tokens_details: { reasoning_tokens: room - 4 } },
    });
    await seedOffer({
      models: [{ id: model.id, upstreamModel }],
      priceCents: 100,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
    });
    const buyer = await seedBuyer(10n * USDC);
    const { body: answer } = await chat(buyer.key, model.id, "Say four words", 50, { reasoning_effort: "high" });
    const bound = defaultReasoningBudget("high");
    expect(answer.usage).toMatchObject({
      completion_tokens: 4 + bound,
      completion_tokens_details: { reasoning_tokens: bound },
      cost_details: {
        claimed_completion_tokens: room,
        billed_reasoning_tokens: bound,
        claimed_reasoning_tokens: room - 4,
        usage_disputed: true,
      },
    });
    const res = await lookup(answer.id, { key: buyer.key });
    expect(res.status).toBe(200);
    const g = (await res.json()) as Generation;
    expect(g.usage).toEqual(answer.usage);
  });

  it("shows how the answer ended and whether it was streamed, as its completion records them", async () => {
    const w = await world();
    // A stream cut short, as the clear records one (tests/integration/clear-batch.test.ts clears such items itself).
    await db.completion.update({ where: { id: w.answer.id }, data: { endReason: "client_cancelled", streamed: true } });
    const res = await lookup(w.answer.id, { key: w.buyer.key });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: w.answer.id, end: "client_cancelled", streamed: true, finish_reason: "length" });
  });

  it("is a 404 to another account, exactly as an unknown id is; 400 for a malformed id; 401 without a live credential", async () => {
    const w = await world();
    const id = w.answer.id;
    const unknown = `chatcmpl-${"Z".repeat(33)}`;
    const bodies: unknown[] = [];
    for (const credentials of [{ key: w.other.key }, { cookie: w.other.cookie }, { key: w.buyer.key }]) {
      for (const target of credentials.key === w.buyer.key ? [unknown] : [id, unknown]) {
        const res = await lookup(target, credentials);
        expect(res.status).toBe(404);
        const { error } = (await res.json()) as { error: unknown };
        bodies.push(error);
      }
    }
    for (const error of bodies) expect(error).toEqual(bodies[0]);
    expect(bodies[0]).toMatchObject({ code: "not_found" });

    for (const malformed of ["nope", "chatcmpl-", `chatcmpl-${"a".repeat(65)}`, "chatcmpl-abc$", "CHATCMPL-abc", " chatcmpl-abc"]) {
      const res = await lookup(malformed, { key: w.buyer.key });
      expect(res.status, malformed).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: "invalid_request", param: "id" } });
    }

    expect((await lookup(id, {})).status).toBe(401);
    await revokeApiKey(w.buyer.id, w.second.id);
    const revoked = await lookup(id, { key: w.second.key, cookie: w.cookie });
    expect(revoked.status).toBe(401);
    expect(await revoked.json()).toMatchObject({ error: { code: "invalid_api_key" } });
    // The revoked key's generations stay readable by the account's other credentials.
    expect((await lookup(id, { cookie: w.cookie })).status).toBe(200);
  });
});
