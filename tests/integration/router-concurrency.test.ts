import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sha256Hex } from "@/lib/auth/tokens";
import { db } from "@/lib/db/client";
import { burnMicroDiem, chargeMicros } from "@/lib/money";
import { reserveWithKey, sweepExpiredHolds } from "@/lib/router/holds";
import { NO_FEATURES } from "@/lib/supply/features";
import { allowedClaim } from "@/lib/upstream/metering";
import { promptMaterial, tokenBounds } from "@/lib/upstream/tokens";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { AnswerGate } from "../helpers/answer-gate";
import { readError } from "../helpers/http";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { buyerBalance, seedBuyer, type callCompletions as CallCompletions } from "../helpers/router-factories";

const REQUESTS = 200;
const MAX_TOKENS = 200;
const messages = [{ role: "user" as const, content: "Count to three, please." }];

// The upstream holds its answers until every one of the parallel requests has reserved (or been refused), so none
// clears before the last reserves: what succeeds is decided by the reservations alone, which makes the counts exact
// however slow the machine.
const gate = new AnswerGate();
let upstream: ReferenceUpstream;
let callCompletions: typeof CallCompletions;
beforeAll(async () => {
  upstream = await startReferenceUpstream({ gate: gate.pass });
  // The first answer waits at the gate for as long as the slowest of the 200 reservations takes: the route is loaded
  // with an upstream timeout no slow machine reaches (the suite's 6 s is for the tests that wait one out).
  vi.resetModules();
  vi.stubEnv("UPSTREAM_TIMEOUT_MS", "600000");
  ({ callCompletions } = await import("../helpers/router-factories"));
});
afterAll(async () => {
  vi.unstubAllEnvs();
  vi.resetModules();
  await upstream.stop();
});

/** The router's worst case for `messages` at MAX_TOKENS: the prompt at its byte bound, plus the usage tolerance. */
function worstCase(model: { inputMicroDiemPerMTok: bigint; outputMicroDiemPerMTok: bigint }, price_cents: number) {
  const reservedPrompt = allowedClaim(tokenBounds(promptMaterial({ messages })).upper);
  const burn = burnMicroDiem(reservedPrompt, MAX_TOKENS, model);
  return { burn, charge: chargeMicros(burn, price_cents) };
}

/** REQUESTS at once; the upstream answers once each has been refused or reached it (`atMost` the design allows). */
async function fireAll(key: string, modelId: string, atMost: number) {
  const responses = await gate.burst(REQUESTS, () => callCompletions(key, { model: modelId, messages, max_tokens: MAX_TOKENS }), atMost);
  const byStatus = new Map<number, number>();
  for (const r of responses) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
  return { responses, byStatus };
}

describe("200 concurrent completions", () => {
  it("on a balance covering 50 worst cases: exactly 50 succeed, 150 get 402, nothing goes negative", async () => {
    const model = await seedPrivateModel();
    const offer = await seedOffer({
      models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
      priceCents: 100,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
    });
    const { charge } = worstCase(model, 100);
    const buyer = await seedBuyer(charge * 50n);

    const { responses, byStatus } = await fireAll(buyer.key, model.id, 50);

    expect(byStatus.get(200)).toBe(50);
    expect(byStatus.get(402)).toBe(150);
    const refused = responses.find((r) => r.status === 402)!;
    expect((await readError(refused)).code).toBe("insufficient_balance");

    const clears = await db.clear.findMany({ where: { offerId: offer.id } });
    expect(clears).toHaveLength(50);
    const charged = clears.reduce((sum, c) => sum + c.chargeMicros, 0n);
    const after = await buyerBalance(buyer.id);
    expect(after.held).toBe(0n);
    expect(after.balance).toBe(charge * 50n - charged);
    expect(after.balance).toBeGreaterThanOrEqual(0n);
    expect(upstream.requestCount()).toBeGreaterThanOrEqual(50);
  }, 60_000);

  it("on an offer whose capacity covers 30 worst cases: exactly 30 succeed, the rest get 503 no_capacity", async () => {
    const model = await seedPrivateModel();
    const { burn } = worstCase(model, 100);
    const offer = await seedOffer({
      models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
      priceCents: 100,
      dailyCapacityMicroDiem: burn * 30n,
      upstreamBaseUrl: upstream.url,
      upstreamApiKey: upstream.apiKey,
    });
    const buyer = await seedBuyer(1_000_000_000n);

    const { responses, byStatus } = await fireAll(buyer.key, model.id, 30);

    expect(byStatus.get(200)).toBe(30);
    expect(byStatus.get(503)).toBe(170);
    expect(responses.find((r) => r.status === 503)!.headers.get("x-svc-error-code")).toBe("no_capacity");
    const day = await db.offerDay.findFirstOrThrow({ where: { offerId: offer.id } });
    expect(day.heldMicroDiem).toBe(0n);
    expect(day.burnedMicroDiem).toBeLessThanOrEqual(burn * 30n);
    expect(await db.clear.count({ where: { offerId: offer.id } })).toBe(30);
  }, 60_000);
});

describe("the hold sweeper", () => {
  it("releases a hold a crash left behind once its deadline has passed, and only then", async () => {
    // 5,000 prompt tokens at 1 diem per 1M tokens: a 5,000 micro-diem burn, 5,000 micro-USDC at 100 cents.
    const model = await seedPrivateModel({ inputMicroDiemPerMTok: 1_000_000n, outputMicroDiemPerMTok: 1_000_000n });
    const offer = await seedOffer({ models: [model.id], priceCents: 100, dailyCapacityMicroDiem: 10_000_000n });
    const buyer = await seedBuyer(1_000_000n);
    const now = new Date();
    const reservation = await reserveWithKey({
      keyHash: sha256Hex(buyer.key),
      modelId: model.id,
      requestedMaxPriceCents: 100,
      promptTokens: 5_000,
      outputTokens: 0,
      features: NO_FEATURES,
      provider: null,
    });
    expect(reservation.status).toBe("ok");
    expect(await buyerBalance(buyer.id)).toEqual({ balance: 1_000_000n, held: 5_000n });

    // The live path sets the deadline to the upstream timeout plus a grace; a crash is simulated with one a second
    // away, so that sweeping past it releases no other test's hold in flight.
    await db.hold.updateMany({ where: { accountId: buyer.id }, data: { expiresAt: new Date(now.getTime() + 1_000) } });

    await sweepExpiredHolds(now);
    expect((await db.hold.findFirstOrThrow({ where: { accountId: buyer.id } })).status).toBe("active");

    await sweepExpiredHolds(new Date(now.getTime() + 2_000));
    expect((await db.hold.findFirstOrThrow({ where: { accountId: buyer.id } })).status).toBe("released");
    expect(await buyerBalance(buyer.id)).toEqual({ balance: 1_000_000n, held: 0n });
    expect((await db.offerDay.findFirstOrThrow({ where: { offerId: offer.id } })).heldMicroDiem).toBe(0n);
    expect((await db.apiKey.findUniqueOrThrow({ where: { id: buyer.apiKeyId } })).spentMicros).toBe(0n);
  });
});
