/**
 * Budgets that reset (limit_reset) and GET /v1/key, through the routes: the limit holds under concurrency on two app
 * processes, a new UTC period serves the key again, a hold that straddles the reset counts against its own period, a
 * limit lowered below the period's spend blocks until the reset, and the key's own figures agree with the ledger.
 * Time moves by injection, never by sleeping: `Date` is faked in this process (vi.useFakeTimers, Date only) and the
 * app processes start at a chosen instant (SVC_TEST_CLOCK_START); every moved clock is ahead of the real one, so no
 * other test's sweeper takes these holds for expired ones.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { PATCH as patchKey } from "@/app/v1/account/api-keys/[id]/route";
import { POST as createKeyRoute, GET as listKeysRoute } from "@/app/v1/account/api-keys/route";
import { GET as getKeyRoute } from "@/app/v1/key/route";
import { createApiKey, revokeApiKey } from "@/lib/auth/api-keys";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { clearMarketCache } from "@/lib/market/cache";
import { burnMicroDiem, chargeMicros, formatMicros } from "@/lib/money";
import { allowedClaim } from "@/lib/upstream/metering";
import { promptMaterial, tokenBounds } from "@/lib/upstream/tokens";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { AnswerGate } from "../helpers/answer-gate";
import { startAppProcess, type AppProcess } from "../helpers/app-process";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError, routeParams } from "../helpers/http";
import { seedBuyerBalance } from "../helpers/ledger-factories";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { callCompletions, seedBuyer } from "../helpers/router-factories";

const DAY = 86_400_000;
const MAX_TOKENS = 200;
const messages = [{ role: "user" as const, content: "Count to three, please." }];
const ask = (max_tokens = MAX_TOKENS) => ({ messages, max_tokens });

const gate = new AnswerGate();
let held: ReferenceUpstream;
let open: ReferenceUpstream;
let failing: ReferenceUpstream;
beforeAll(async () => {
  [held, open, failing] = await Promise.all([
    startReferenceUpstream({ gate: gate.pass }),
    startReferenceUpstream(),
    startReferenceUpstream({ gate: gate.pass, defaultMode: "error:500" }),
  ]);
});
afterAll(async () => {
  await Promise.all([held, open, failing].map((u) => u.stop()));
});
afterEach(() => {
  vi.useRealTimers();
  clearMarketCache();
  // A test that failed midway must not leave answers parked for the next one's counts.
  gate.release();
});

/**
 * This process's clock at `at` (frozen there until moved again). The market caches count their age by the clock, so
 * they start afresh whenever it moves (a clock moved back would keep an entry loaded "later" forever).
 */
function clockAt(at: number | Date) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(at);
  clearMarketCache();
}

/** 00:00 UTC of the day that holds `t`. */
const dayOf = (t: number) => Math.floor(t / DAY) * DAY;

/** A Wednesday, 12:00 UTC, on the 8th of its month or later, at least `days` ahead of the real clock. */
function futureWednesday(days: number): number {
  let t = dayOf(Date.now() + days * DAY) + DAY / 2;
  while (new Date(t).getUTCDay() !== 3 || new Date(t).getUTCDate() < 8) t += DAY;
  return t;
}

/** The reservation of one request at max_tokens (its prompt at its byte bound), at 100 cents per diem. */
function worstCase(model: { inputMicroDiemPerMTok: bigint; outputMicroDiemPerMTok: bigint }, maxTokens = MAX_TOKENS) {
  return chargeMicros(burnMicroDiem(allowedClaim(tokenBounds(promptMaterial({ messages })).upper), maxTokens, model), 100);
}

/** A private model with one offer at 100 cents per diem on `via`. */
async function market(via: ReferenceUpstream) {
  const model = await seedPrivateModel();
  await seedOffer({
    models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
    priceCents: 100,
    dailyCapacityMicroDiem: 1_000_000_000n,
    upstreamBaseUrl: via.url,
    upstreamApiKey: via.apiKey,
  });
  return model;
}

async function complete(key: string, modelId: string, maxTokens = MAX_TOKENS) {
  const res = await callCompletions(key, { model: modelId, ...ask(maxTokens) });
  const body = (await res.json()) as { id?: string; error?: { code: string; limit_reset?: string; limit_resets_at?: string } };
  return { status: res.status, body };
}

/**
 * A request that reaches the gated upstream: resolves once `count` requests are parked there (this one reserved), with
 * its answer still pending (in an object: an async function returning the promise itself would wait for it).
 */
async function parked(key: string, modelId: string, count: number): Promise<{ answer: Promise<Response> }> {
  const answer = callCompletions(key, { model: modelId, ...ask() });
  await gate.until(count);
  return { answer };
}

function getKey(key: string, headers: Record<string, string> = {}) {
  return getKeyRoute(jsonRequest("GET", "/v1/key", undefined, { authorization: `Bearer ${key}`, ...headers }));
}

type CurrentKeyData = {
  id: string;
  name: string;
  prefix: string;
  limit: string | null;
  limit_remaining: string | null;
  limit_reset: string | null;
  limit_resets_at: string | null;
  usage: string;
  usage_daily: string;
  usage_weekly: string;
  usage_monthly: string;
  max_price_cents: number | null;
  expires_at: string | null;
  rate_limit: { requests: number; interval: string };
};

async function currentKey(key: string): Promise<CurrentKeyData> {
  const res = await getKey(key);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { object: string; data: CurrentKeyData };
  expect(body.object).toBe("key");
  return body.data;
}

function patch(cookie: string, id: string, body: unknown) {
  return patchKey(jsonRequest("PATCH", `/v1/account/api-keys/${id}`, body, { cookie }), routeParams({ id }));
}

/** What the key's clears took from the buyer, by the time of each clear's journal entry (the ledger itself). */
async function ledgerCharges(apiKeyId: string) {
  return db.$queryRaw<{ at: Date; amount: bigint }[]>`
    SELECT je."created_at" AS at, -jl."amount_micros" AS amount
    FROM "journal_lines" jl
    JOIN "journal_entries" je ON je."id" = jl."entry_id"
    JOIN "clears" cl ON cl."id" = je."clear_id"
    JOIN "completions" c ON c."id" = cl."completion_id"
    JOIN "ledger_accounts" la ON la."id" = jl."ledger_account_id" AND la."kind" = 'buyer'
    WHERE c."api_key_id" = ${apiKeyId}::uuid`;
}

const sumFrom = (lines: { at: Date; amount: bigint }[], from: number, to = Infinity) =>
  lines.filter((l) => l.at.getTime() >= from && l.at.getTime() < to).reduce((s, l) => s + BigInt(l.amount), 0n);

describe("limit_reset on POST and PATCH /v1/account/api-keys", () => {
  it("creates a key with a daily limit, shown with the period's spend and its next reset", async () => {
    const t = futureWednesday(2);
    clockAt(t);
    const buyer = await seedSignedInAccount();
    const res = await createKeyRoute(
      jsonRequest("POST", "/v1/account/api-keys", { name: "daily", spend_limit: "5", limit_reset: "daily" }, { cookie: buyer.cookie }),
    );
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      spend_limit: "5.000000",
      limit_reset: "daily",
      period_spent: "0.000000",
      limit_resets_at: new Date(dayOf(t) + DAY).toISOString(),
    });
    const lifetime = await createKeyRoute(jsonRequest("POST", "/v1/account/api-keys", { spend_limit: "5" }, { cookie: buyer.cookie }));
    expect(await lifetime.json()).toMatchObject({ limit_reset: null, period_spent: null, limit_resets_at: null });
  });

  it.each([
    ["an unknown value", "hourly"],
    ["a capitalized value", "Daily"],
    ["a number", 1],
    ["an empty string", ""],
  ])("refuses %s with 400 naming limit_reset, on create and on edit", async (_, value) => {
    const buyer = await seedSignedInAccount();
    const created = await createKeyRoute(jsonRequest("POST", "/v1/account/api-keys", { limit_reset: value }, { cookie: buyer.cookie }));
    expect(created.status).toBe(400);
    const error = (await created.json()) as { error: { code: string; message: string; param: string } };
    expect(error.error).toMatchObject({ code: "invalid_request", param: "limit_reset" });
    expect(error.error.message).toContain("limit_reset");
    expect(await db.apiKey.count({ where: { accountId: buyer.id } })).toBe(0);

    const key = await createApiKey(buyer.id, {});
    const edited = await patch(buyer.cookie, key.id, { limit_reset: value });
    expect(edited.status).toBe(400);
    expect(((await edited.json()) as { error: { param: string } }).error.param).toBe("limit_reset");
    expect((await db.apiKey.findUniqueOrThrow({ where: { id: key.id } })).limitReset).toBeNull();
  });

  it("edits only what is sent; another account's key and a malformed id are 404, a revoked key 409", async () => {
    const buyer = await seedSignedInAccount();
    const other = await seedSignedInAccount();
    const created = (await (
      await createKeyRoute(
        jsonRequest("POST", "/v1/account/api-keys", { name: "k", max_price_cents: 90, spend_limit: "3" }, { cookie: buyer.cookie }),
      )
    ).json()) as { id: string };

    const res = await patch(buyer.cookie, created.id, { limit_reset: "weekly", spend_limit: "7.5" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: created.id,
      name: "k",
      max_price_cents: 90,
      spend_limit: "7.500000",
      limit_reset: "weekly",
      period_spent: "0.000000",
    });
    expect(await (await patch(buyer.cookie, created.id, { limit_reset: null, max_price_cents: null })).json()).toMatchObject({
      name: "k",
      max_price_cents: null,
      spend_limit: "7.500000",
      limit_reset: null,
      period_spent: null,
      limit_resets_at: null,
    });

    for (const [cookie, id] of [
      [other.cookie, created.id],
      [buyer.cookie, "not-a-uuid"],
      [buyer.cookie, "00000000-0000-4000-8000-000000000000"],
    ]) {
      const refused = await patch(cookie, id, { limit_reset: "daily" });
      expect(refused.status).toBe(404);
      expect((await readError(refused)).code).toBe("not_found");
    }
    expect(await patch(buyer.cookie, created.id, { scopes: ["all"] }).then((r) => r.status)).toBe(400);

    await revokeApiKey(buyer.id, created.id);
    const revoked = await patch(buyer.cookie, created.id, { limit_reset: "daily" });
    expect(revoked.status).toBe(409);
    expect((await readError(revoked)).code).toBe("conflict");
    expect((await db.apiKey.findUniqueOrThrow({ where: { id: created.id } })).limitReset).toBeNull();

    const list = (await (await listKeysRoute(jsonRequest("GET", "/v1/account/api-keys", undefined, { cookie: buyer.cookie }))).json()) as {
      data: { id: string; limit_reset: string | null }[];
    };
    expect(list.data.find((k) => k.id === created.id)?.limit_reset).toBeNull();
  });
});

describe("GET /v1/key", () => {
  it("describes the calling key; its figures match the ledger after a mix of requests over days, weeks and months", async () => {
    const model = await market(open);
    const heldModel = await market(held);
    const failingModel = await market(failing);
    const t0 = futureWednesday(40);
    const buyer = await seedBuyer(1_000_000_000n, { name: "agent", spend_limit: 1_000_000n, limit_reset: "weekly", max_price_cents: 150 });

    // Served a month before, last Sunday (this month, last week), yesterday (this week), and today; one failed
    // yesterday (its hold released); one in flight today while the key looks at itself.
    for (const [at, n] of [
      [t0 - 35 * DAY, 1],
      [t0 - 3 * DAY, 1],
      [t0 - DAY, 2],
      [t0, 2],
    ] as const) {
      clockAt(at);
      for (let i = 0; i < n; i++) expect((await complete(buyer.key, model.id)).status).toBe(200);
    }
    clockAt(t0 - DAY);
    const failed = callCompletions(buyer.key, { model: failingModel.id, ...ask() });
    await gate.until(1);
    gate.release();
    expect((await failed).status).toBe(502);

    clockAt(t0);
    const { answer: inFlight } = await parked(buyer.key, heldModel.id, 1);
    const hold = await db.hold.findFirstOrThrow({ where: { apiKeyId: buyer.apiKeyId, status: "active" } });

    const lines = await ledgerCharges(buyer.apiKeyId);
    expect(lines).toHaveLength(6);
    const day = dayOf(t0);
    const week = day - 2 * DAY; // Monday
    const month = Date.UTC(new Date(t0).getUTCFullYear(), new Date(t0).getUTCMonth(), 1);
    const weekSpent = sumFrom(lines, week);
    const key = await currentKey(buyer.key);
    expect(key).toEqual({
      id: buyer.apiKeyId,
      name: "agent",
      prefix: buyer.key.slice(0, 12),
      limit: "1.000000",
      // The week's clears and the request in flight (the released hold gave its reservation back).
      limit_remaining: formatMicros(1_000_000n - weekSpent - hold.amountMicros),
      limit_reset: "weekly",
      limit_resets_at: new Date(week + 7 * DAY).toISOString(),
      usage: formatMicros(sumFrom(lines, 0)),
      usage_daily: formatMicros(sumFrom(lines, day, day + DAY)),
      usage_weekly: formatMicros(weekSpent),
      usage_monthly: formatMicros(sumFrom(lines, month)),
      max_price_cents: 150,
      provider_preferences: null,
      expires_at: null,
      created_at: expect.any(String),
      rate_limit: { requests: env.RATE_LIMIT_PER_KEY_PER_MINUTE, interval: "60s" },
    });
    // Each window holds what it should: today 2, this week 4, this month 5 clears, 6 in all.
    expect(sumFrom(lines, day, day + DAY)).toBeLessThan(weekSpent);
    expect(weekSpent).toBeLessThan(sumFrom(lines, month));
    expect(sumFrom(lines, month)).toBeLessThan(sumFrom(lines, 0));

    gate.release();
    expect((await inFlight).status).toBe(200);
    const after = await ledgerCharges(buyer.apiKeyId);
    const done = await currentKey(buyer.key);
    expect(done.usage).toBe(formatMicros(sumFrom(after, 0)));
    expect(done.usage_daily).toBe(formatMicros(sumFrom(after, day, day + DAY)));
    expect(done.limit_remaining).toBe(formatMicros(1_000_000n - sumFrom(after, week)));
    const row = await db.apiKey.findUniqueOrThrow({ where: { id: buyer.apiKeyId } });
    expect(row.periodSpentMicros).toBe(sumFrom(after, week));
    expect(row.spentMicros).toBe(sumFrom(after, 0));
  }, 60_000);

  it("answers only a live key, by Bearer: not a session, not a revoked key (even one this process has cached)", async () => {
    const buyer = await seedBuyer(0n);
    expect((await currentKey(buyer.key)).limit).toBeNull();

    const none = await getKeyRoute(jsonRequest("GET", "/v1/key"));
    expect(none.status).toBe(401);
    const session = await seedSignedInAccount();
    const withCookie = await getKey(buyer.key, { cookie: session.cookie });
    expect(withCookie.status).toBe(401);
    expect((await readError(withCookie)).code).toBe("session_cookie_not_accepted");

    await db.apiKey.update({ where: { id: buyer.apiKeyId }, data: { revokedAt: new Date() } });
    const revoked = await getKey(buyer.key);
    expect(revoked.status).toBe(401);
    expect((await readError(revoked)).code).toBe("invalid_api_key");
  });
});

describe("a hold that straddles the reset", () => {
  it("counts against the period it was reserved in: the new period starts at 0 and gets nothing back from it", async () => {
    const model = await market(held);
    const failingModel = await market(failing);
    const w = worstCase(model);
    const buyer = await seedBuyer(1_000_000_000n, { spend_limit: 3n * w, limit_reset: "daily" });
    const d = dayOf(futureWednesday(3));
    const holdsOf = (periodStart: number, modelId: string) =>
      db.hold.findFirstOrThrow({ where: { apiKeyId: buyer.apiKeyId, keyPeriodStart: new Date(periodStart), modelId } });

    // A: reserved a minute before midnight. B, and C (whose upstream will fail): a minute after.
    clockAt(d + DAY - 60_000);
    const { answer: a } = await parked(buyer.key, model.id, 1);
    clockAt(d + DAY + 60_000);
    const { answer: b } = await parked(buyer.key, model.id, 2);
    const c = callCompletions(buyer.key, { model: failingModel.id, ...ask() });
    await gate.until(3);
    let key = await db.apiKey.findUniqueOrThrow({ where: { id: buyer.apiKeyId } });
    expect(key.periodStart).toEqual(new Date(d + DAY));
    expect(key.periodSpentMicros).toBe(2n * w); // B and C: A is the day before's
    const [holdA, holdB, holdC] = await Promise.all([holdsOf(d, model.id), holdsOf(d + DAY, model.id), holdsOf(d + DAY, failingModel.id)]);

    // D: reserved after the next midnight, then everything answers: A and B clear and C fails in D's day.
    clockAt(d + 2 * DAY + 60_000);
    const { answer: dee } = await parked(buyer.key, model.id, 4);
    key = await db.apiKey.findUniqueOrThrow({ where: { id: buyer.apiKeyId } });
    expect([key.periodStart, key.periodSpentMicros]).toEqual([new Date(d + 2 * DAY), w]);
    gate.release();
    expect((await a).status).toBe(200);
    expect((await b).status).toBe(200);
    expect((await c).status).toBe(502);
    expect((await dee).status).toBe(200);

    const charge = async (holdId: string) => (await db.clear.findFirstOrThrow({ where: { completion: { holdId } } })).chargeMicros;
    const holdD = await holdsOf(d + 2 * DAY, model.id);
    const [cA, cB, cD] = await Promise.all([charge(holdA.id), charge(holdB.id), charge(holdD.id)]);
    expect((await db.hold.findUniqueOrThrow({ where: { id: holdC.id } })).status).toBe("released");
    key = await db.apiKey.findUniqueOrThrow({ where: { id: buyer.apiKeyId } });
    // D's day counts D alone: neither A's and B's unused parts nor C's released reservation came back to it.
    expect(key.periodStart).toEqual(new Date(d + 2 * DAY));
    expect(key.periodSpentMicros).toBe(cD);
    expect(key.spentMicros).toBe(cA + cB + cD);

    // The key sees the same: this day's limit less D; usage_daily counts the clears made today (all three were).
    const now = await currentKey(buyer.key);
    expect(now.limit_remaining).toBe(formatMicros(3n * w - cD));
    expect(now.usage_daily).toBe(formatMicros(cA + cB + cD));
  }, 30_000);
});

describe("a limit below what the period has spent", () => {
  it("is accepted, refuses the key until the UTC reset (saying when), then serves it again", async () => {
    const model = await market(open);
    const t = futureWednesday(5);
    clockAt(t);
    const session = await seedSignedInAccount();
    await seedBuyerBalance(session.id, 1_000_000_000n);
    const created = await createApiKey(session.id, { spend_limit: 100_000_000n, limit_reset: "daily" });
    const buyer = { key: created.key, apiKeyId: created.id };

    expect((await complete(buyer.key, model.id)).status).toBe(200);
    expect((await complete(buyer.key, model.id)).status).toBe(200);
    const spent = (await db.apiKey.findUniqueOrThrow({ where: { id: buyer.apiKeyId } })).periodSpentMicros;
    const small = worstCase(model, 1);
    expect(small).toBeLessThan(spent);

    const lowered = await patch(session.cookie, buyer.apiKeyId, { spend_limit: formatMicros(spent - 1n) });
    expect(lowered.status).toBe(200);
    expect(await lowered.json()).toMatchObject({ spend_limit: formatMicros(spent - 1n), period_spent: formatMicros(spent) });
    expect((await currentKey(buyer.key)).limit_remaining).toBe("0.000000");

    const refused = await complete(buyer.key, model.id, 1);
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({
      code: "spend_limit_exceeded",
      limit_reset: "daily",
      limit_resets_at: new Date(dayOf(t) + DAY).toISOString(),
    });

    clockAt(dayOf(t) + DAY + 1000);
    expect((await complete(buyer.key, model.id, 1)).status).toBe(200);
    const key = await db.apiKey.findUniqueOrThrow({ where: { id: buyer.apiKeyId } });
    expect(key.periodStart).toEqual(new Date(dayOf(t) + DAY));
    expect(key.periodSpentMicros).toBeLessThanOrEqual(small);
  }, 30_000);
});

describe("a daily limit under 40 concurrent requests on two app processes", () => {
  let apps: AppProcess[] = [];
  // Both processes at noon UTC of a day ahead: the burst cannot straddle a midnight however slow the machine.
  const noon = dayOf(Date.now()) + DAY + DAY / 2;
  beforeAll(async () => {
    const env = { UPSTREAM_TIMEOUT_MS: "600000", SVC_TEST_CLOCK_START: new Date(noon).toISOString() };
    apps = await Promise.all([startAppProcess(env), startAppProcess(env)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.kill()));
  });

  it("spends at most the limit, and a request after the UTC reset is served again", async () => {
    const model = await market(held);
    const w = worstCase(model);
    const buyer = await seedBuyer(1_000_000_000n, { spend_limit: 10n * w, limit_reset: "daily" });

    const responses = await gate.burst(
      40,
      (i) =>
        fetch(`${apps[i % 2].url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${buyer.key}` },
          body: JSON.stringify({ model: model.id, ...ask() }),
        }),
      10,
    );
    const counts: Record<string, number> = {};
    for (const r of responses) {
      const code = r.status === 200 ? "200" : `${r.status} ${((await r.json()) as { error: { code: string } }).error.code}`;
      counts[code] = (counts[code] ?? 0) + 1;
      if (r.status === 200) await r.body?.cancel().catch(() => undefined);
    }
    expect(counts).toEqual({ "200": 10, "402 spend_limit_exceeded": 30 });

    let key = await db.apiKey.findUniqueOrThrow({ where: { id: buyer.apiKeyId } });
    const charged = sumFrom(await ledgerCharges(buyer.apiKeyId), 0);
    expect(key.periodStart).toEqual(new Date(dayOf(noon)));
    expect(key.periodSpentMicros).toBe(charged);
    expect(charged).toBeLessThanOrEqual(10n * w);
    expect(await db.completion.count({ where: { apiKeyId: buyer.apiKeyId } })).toBe(10);

    // After the UTC reset (this process's clock moved past it), served again from a counter that starts at 0.
    clockAt(dayOf(noon) + DAY + 60_000);
    const { answer: next } = await parked(buyer.key, model.id, 1);
    gate.release();
    expect((await next).status).toBe(200);
    key = await db.apiKey.findUniqueOrThrow({ where: { id: buyer.apiKeyId } });
    expect(key.periodStart).toEqual(new Date(dayOf(noon) + DAY));
    const all = await ledgerCharges(buyer.apiKeyId);
    expect(key.periodSpentMicros).toBe(sumFrom(all, dayOf(noon) + DAY));
  }, 60_000);
});
