/**
 * An open market that holds against its own participants (issue 11), through the route: token counting that
 * cannot freeze the server, which upstream answers count against a supplier, usage verification, and the hop
 * header that stops an offer pointing back at svc from nesting clears.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as chatRoute } from "@/app/v1/chat/completions/route";
import { GET as bookRoute } from "@/app/v1/market/book/route";
import { GET as marketModelsRoute } from "@/app/v1/market/models/route";
import { GET as listOffersRoute } from "@/app/v1/supply/offers/route";
import { db } from "@/lib/db/client";
import { clearMarketCache } from "@/lib/market/cache";
import { burnMicroDiem, chargeMicros } from "@/lib/money";
import { allowedClaim } from "@/lib/upstream/metering";
import { countPromptTokens, countReplyTokens } from "@/lib/upstream/tokens";
import { INFLATED_USAGE_TOKENS, startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { completion, startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError } from "../helpers/http";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { startRouteServer, type RouteServer } from "../helpers/route-server";
import { buyerBalance, callCompletions, seedBuyer } from "../helpers/router-factories";

const ONE_USDC = 1_000_000n;
const hello = { role: "user", content: "Hello" };

let reference: ReferenceUpstream;
let inflating: ReferenceUpstream;
let canned: CannedUpstream;

beforeAll(async () => {
  [reference, inflating, canned] = await Promise.all([
    startReferenceUpstream(),
    startReferenceUpstream({ defaultMode: "inflate" }),
    startCannedUpstream(),
  ]);
});
afterAll(async () => {
  await Promise.all([reference.stop(), inflating.stop(), canned.stop()]);
});

async function market(via: { url: string; apiKey: string } = reference, options: { upstream_model?: string; supplierId?: string } = {}) {
  const model = await seedPrivateModel();
  const offer = await seedOffer({
    supplierId: options.supplierId,
    models: [{ id: model.id, upstreamModel: options.upstream_model ?? (via === canned ? "canned-model" : "llama-3.3-70b") }],
    priceCents: 100,
    dailyCapacityMicroDiem: 1_000_000_000n,
    upstreamBaseUrl: via.url,
    upstreamApiKey: via.apiKey,
  });
  return { model, offer };
}

/** Random characters from a block (deterministic): no two 16-character pieces alike, the tokenizer's costliest input. */
function costly(chars: number, from: number, span: number): string {
  let seed = 7;
  return Array.from({ length: chars }, () =>
    String.fromCharCode(from + ((seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff) % span)),
  ).join("");
}
const cjk = (chars: number) => costly(chars, 0x4e00, 20_000);

/** Runs `fn` and reports its duration and the event loop's longest stall meanwhile (what every other request waits). */
async function measured<T>(fn: () => Promise<T>) {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const started = performance.now();
  const result = await fn();
  const ms = performance.now() - started;
  delay.disable();
  return { result, ms, stallMs: delay.max / 1e6 };
}

async function offerHealth(offerId: string) {
  return db.offer.findUniqueOrThrow({
    where: { id: offerId },
    select: { consecutiveFailures: true, unhealthyUntil: true, lastFailureReason: true },
  });
}

describe("token counting cannot freeze the server", () => {
  it("refuses an unfunded key sending 400 KB of the costliest text at once, without counting it", async () => {
    const { model } = await market();
    const buyer = await seedBuyer(0n);
    const {
      result: res,
      ms,
      stallMs,
    } = await measured(() => callCompletions(buyer.key, { model: model.id, messages: [{ role: "user", content: cjk(130_000) }] }));
    expect(res.status).toBe(402);
    expect((await readError(res)).code).toBe("insufficient_balance");
    expect(ms).toBeLessThan(3_000);
    expect(stallMs).toBeLessThan(1_000);
  });

  it("tells a key revoked since this process cached it nothing, not even its balance, on the early 402 path", async () => {
    const { model } = await market();
    const buyer = await seedBuyer(0n);
    const big = { model: model.id, messages: [{ role: "user", content: cjk(130_000) }] };
    expect((await callCompletions(buyer.key, big)).status).toBe(402); // the key is now cached as live
    await db.apiKey.update({ where: { id: buyer.apiKeyId }, data: { revokedAt: new Date() } });
    const res = await callCompletions(buyer.key, big);
    expect(res.status).toBe(401);
    expect((await readError(res)).code).toBe("invalid_api_key");
  });

  it("refuses 1 MB of text for a 32k-token model by its size, before counting", async () => {
    const { model } = await market();
    const buyer = await seedBuyer(ONE_USDC);
    const { result: res, ms } = await measured(() =>
      callCompletions(buyer.key, { model: model.id, messages: [{ role: "user", content: cjk(330_000) }] }),
    );
    expect(res.status).toBe(400);
    expect(await readError(res)).toMatchObject({ code: "context_length_exceeded", param: "messages" });
    expect(ms).toBeLessThan(3_000);
  });

  it("counts a near-context prompt of the costliest text in slices: it is served, and the event loop never stalls", async () => {
    const { model } = await market();
    const buyer = await seedBuyer(ONE_USDC);
    const content = cjk(15_000); // 45 KB, about 29,000 tokens of a 32,768-token context: must be counted to fit
    const {
      result: res,
      ms,
      stallMs,
    } = await measured(() => callCompletions(buyer.key, { model: model.id, messages: [{ role: "user", content }], max_tokens: 50 }));
    expect(res.status).toBe(200);
    const data = await res.json();
    expect(data.usage.prompt_tokens).toBe(await countPromptTokens({ messages: [{ role: "user", content }] }));
    expect(ms).toBeLessThan(10_000);
    expect(stallMs).toBeLessThan(500);
  });

  it("counts a 4 MB reply without usage only up to max_tokens", async () => {
    const { model } = await market(canned);
    const buyer = await seedBuyer(ONE_USDC);
    canned.answer({ status: 200, body: completion({ content: costly(1_350_000, 0x2200, 0x900) }) });
    const {
      result: res,
      ms,
      stallMs,
    } = await measured(() => callCompletions(buyer.key, { model: model.id, messages: [hello], max_tokens: 100 }));
    expect(res.status).toBe(200);
    expect((await res.json()).usage.completion_tokens).toBe(100);
    expect(ms).toBeLessThan(5_000);
    expect(stallMs).toBeLessThan(1_000);
  });
});

describe("only the supplier's faults count against its offer", () => {
  it.each([400, 413, 422])(
    "an upstream %i (our validated request was refused) is the buyer's 400, costs nothing and leaves the offer healthy",
    async (status) => {
      const { model, offer } = await market(canned);
      const buyer = await seedBuyer(ONE_USDC);
      canned.answer({ status, body: { error: { message: `upstream says no (${status})\u0000`, code: "bad" } } });
      const res = await callCompletions(buyer.key, { model: model.id, messages: [hello], max_tokens: 10 });
      expect(res.status).toBe(400);
      const error = await readError(res);
      expect(error).toMatchObject({ code: "upstream_rejected_request", upstream_status: status });
      expect(error.message).toContain(`upstream says no (${status})`);
      expect(await offerHealth(offer.id)).toMatchObject({ consecutiveFailures: 0, unhealthyUntil: null });
      expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC, held: 0n });
    },
  );

  it.each([
    [401, "cools down at once (no request makes an upstream refuse the supplier's key)"],
    [404, "counts it, and one buyer's failure alone does not cool it down"],
    [429, "counts it, and one buyer's failure alone does not cool it down"],
    [500, "counts it, and one buyer's failure alone does not cool it down"],
    [503, "counts it, and one buyer's failure alone does not cool it down"],
  ] as const)("an upstream %i is the supplier's fault: 502, nothing charged; the offer %s", async (status, _outcome) => {
    const { model, offer } = await market(canned);
    const buyer = await seedBuyer(ONE_USDC);
    canned.answer({ status, body: { error: { message: "nope" } } });
    const res = await callCompletions(buyer.key, { model: model.id, messages: [hello], max_tokens: 10 });
    expect(res.status).toBe(502);
    const health = await offerHealth(offer.id);
    expect(health.consecutiveFailures).toBe(1);
    if (status === 401) expect(health.unhealthyUntil!.getTime()).toBeGreaterThan(Date.now());
    else expect(health.unhealthyUntil).toBeNull();
    expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC, held: 0n });
  });

  it("refuses 420 KB of invalid UTF-8 at the edge: nothing is forwarded, the offer stays healthy", async () => {
    const { model, offer } = await market(canned);
    const buyer = await seedBuyer(ONE_USDC);
    const before = canned.received.length;
    const body = Buffer.concat([
      Buffer.from(`{"model":"${model.id}","messages":[{"role":"user","content":"`),
      Buffer.alloc(420_000, 0xff),
      Buffer.from(`"}],"max_tokens":10}`),
    ]);
    const res = await chatRoute(
      new Request("http://localhost:3000/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${buyer.key}` },
        body: new Uint8Array(body),
      }),
    );
    expect(res.status).toBe(400);
    expect(await readError(res)).toMatchObject({ code: "invalid_json", message: expect.stringContaining("UTF-8") });
    expect(canned.received.length).toBe(before);
    expect(await offerHealth(offer.id)).toMatchObject({ consecutiveFailures: 0, unhealthyUntil: null });
  });

  it("never forwards more than the body limit: numbers that re-encode longer are refused before anything is reserved", async () => {
    const { model } = await market(canned);
    const buyer = await seedBuyer(ONE_USDC);
    const before = canned.received.length;
    const tool = `{"type":"function","function":{"name":"f","parameters":{"type":"object","enum":[${Array(150_000).fill("1e20").join(",")}]}}}`;
    const res = await chatRoute(
      new Request("http://localhost:3000/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${buyer.key}` },
        body: `{"model":"${model.id}","messages":[{"role":"user","content":"hi"}],"tools":[${tool}]}`,
      }),
    );
    expect(res.status).toBe(413);
    expect((await readError(res)).code).toBe("payload_too_large");
    expect(canned.received.length).toBe(before);
    expect(await db.hold.count({ where: { accountId: buyer.id } })).toBe(0);
  });

  it("forwards exactly the fields it validated, with the hop header", async () => {
    const { model } = await market(canned);
    const buyer = await seedBuyer(ONE_USDC);
    canned.answer({ status: 200, body: completion({ content: "ok" }) });
    const content = "naïve café — 日本語 \u{1F600}";
    await callCompletions(buyer.key, { model: model.id, messages: [{ role: "user", content }], max_tokens: 10 });
    const last = canned.received.at(-1)!;
    expect(last.headers["x-svc-hop"]).toBe("1");
    expect(last.body).toEqual({ model: "canned-model", max_tokens: 10, stream: false, messages: [{ role: "user", content }] });
  });
});

describe("usage verification", () => {
  it("bills our own count, not an upstream's claim of 1M/1M tokens for a one-word reply, and records the dispute", async () => {
    const supplier = await seedSignedInAccount();
    const { model, offer } = await market(inflating, { supplierId: supplier.id });
    const buyer = await seedBuyer(ONE_USDC);
    const request = { model: model.id, messages: [{ role: "user", content: "Say yes" }], max_tokens: 2_000 };

    const res = await callCompletions(buyer.key, request);

    expect(res.status).toBe(200);
    const data = await res.json();
    expect(data.choices[0].message.content).toBe("Yes.");
    const ours = { prompt: await countPromptTokens(request as never), completion: await countReplyTokens({ content: "Yes." }) };
    expect(data.usage).toEqual({
      prompt_tokens: ours.prompt,
      completion_tokens: ours.completion,
      total_tokens: ours.prompt + ours.completion,
      cost: expect.any(Number),
      // The answer says what was billed beside what was claimed, and that the claim was refused.
      cost_details: expect.objectContaining({
        billed_prompt_tokens: ours.prompt,
        billed_completion_tokens: ours.completion,
        claimed_prompt_tokens: 1_000_000,
        claimed_completion_tokens: 1_000_000,
        usage_disputed: true,
      }),
    });
    const charge = chargeMicros(burnMicroDiem(ours.prompt, ours.completion, model), 100);
    expect(res.headers.get("x-svc-cost")).toBe(`0.${String(charge).padStart(6, "0")}`);
    expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC - charge, held: 0n });
    expect(await db.completion.findUniqueOrThrow({ where: { id: data.id } })).toMatchObject({
      promptTokens: ours.prompt,
      completionTokens: ours.completion,
      claimedPromptTokens: INFLATED_USAGE_TOKENS,
      claimedCompletionTokens: INFLATED_USAGE_TOKENS,
      usageDisputed: true,
    });

    // The dispute shows in the offer's health, on the book and in the market's model list. A claim that far beyond
    // what the request allows also counts against the offer's health: a failure in its streak, weighed across buyers.
    const offers = await (await listOffersRoute(jsonRequest("GET", "/v1/supply/offers", undefined, { cookie: supplier.cookie }))).json();
    const health = offers.data.find((o: { id: string }) => o.id === offer.id).health;
    expect(health.disputes).toEqual({ window_days: 30, clears: 1, disputed: 1, dispute_rate: 1 });
    expect(health).toMatchObject({ status: "healthy", consecutive_failures: 1 });
    clearMarketCache();
    const book = await (await bookRoute(jsonRequest("GET", `/v1/market/book?model=${model.id}`))).json();
    expect(book).toMatchObject({ dispute_rate: 1, levels: [{ price_cents: 100, dispute_rate: 1 }] });
    const models = await (await marketModelsRoute(jsonRequest("GET", "/v1/market/models"))).json();
    expect(models.data.find((m: { id: string }) => m.id === model.id).dispute_rate).toBe(1);
  });

  it("bills an honest claim as claimed, within the tolerance, and counts no dispute", async () => {
    const { model, offer } = await market(canned);
    const buyer = await seedBuyer(ONE_USDC);
    const request = { model: model.id, messages: [{ role: "user", content: "Say something" }], max_tokens: 100 };
    const ours = await countPromptTokens(request as never);
    // Another tokenizer and chat template: a few more tokens than ours on each side (up to twice a short count).
    const claimed = allowedClaim(ours);
    expect(claimed).toBeGreaterThan(ours);
    canned.answer({
      status: 200,
      body: completion({ content: "Something, as asked." }, { prompt_tokens: claimed, completion_tokens: 9, total_tokens: claimed + 9 }),
    });
    const data = await (await callCompletions(buyer.key, request)).json();
    expect(data.usage).toMatchObject({ prompt_tokens: claimed, completion_tokens: 9 });
    const day = await db.offerDay.findFirstOrThrow({ where: { offerId: offer.id } });
    expect(day).toMatchObject({ clears: 1, disputedClears: 0 });
  });
});

describe("an offer whose upstream is svc itself", () => {
  let app: RouteServer;
  beforeAll(async () => {
    app = await startRouteServer();
  });
  afterAll(() => app.stop());

  it("is refused at the first hop: one forwarded request, no nested clears, only the offer pays in health", async () => {
    // The supplier points its offer at svc, with its own funded svc key and the same model: each hop would buy again.
    const supplier = await seedBuyer(ONE_USDC);
    const model = await seedPrivateModel();
    const offer = await seedOffer({
      supplierId: supplier.id,
      models: [{ id: model.id, upstreamModel: model.id }],
      priceCents: 100,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: `${app.url}/v1`,
      upstreamApiKey: supplier.key,
    });
    const buyer = await seedBuyer(ONE_USDC);

    const res = await callCompletions(buyer.key, { model: model.id, messages: [hello], max_tokens: 10 });

    expect(res.status).toBe(502);
    expect((await readError(res)).message).toContain("svc itself");
    expect(app.requests.filter((r) => r === "POST /v1/chat/completions")).toHaveLength(1);
    expect(await db.clear.count({ where: { offerId: offer.id } })).toBe(0);
    expect(await db.hold.count({ where: { accountId: supplier.id } })).toBe(0);
    expect(await buyerBalance(supplier.id)).toEqual({ balance: ONE_USDC, held: 0n });
    expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC, held: 0n });
    expect((await offerHealth(offer.id)).lastFailureReason).toContain("forwarding loop");
  });

  it("answers a chat request carrying the hop header with 508 loop_detected, before routing", async () => {
    const buyer = await seedBuyer(ONE_USDC);
    const { model } = await market();
    const res = await callCompletions(buyer.key, { model: model.id, messages: [hello] }, { "x-svc-hop": "1" });
    expect(res.status).toBe(508);
    expect((await readError(res)).code).toBe("loop_detected");
    expect(await db.hold.count({ where: { accountId: buyer.id } })).toBe(0);
  });
});
