/**
 * A supplier's usage claim never reaches SQL unbounded, and one bad item never touches the rest of its clear batch
 * (issue 27, item 2), through the route: an upstream answering `usage.prompt_tokens = 2147483648` made
 * svc_clear_batch fail ("out of range for type integer"), every buyer in that batch got 500, the offer stayed the
 * cheapest, and each poisoned batch was re-run item by item.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { pgPool } from "@/lib/db/pool";
import { requireDatabaseUrl } from "@/lib/env";
import { burnMicroDiem, chargeMicros } from "@/lib/money";
import { queuedClears, releaseHold } from "@/lib/router/holds";
import { countPromptTokens, countReplyTokens } from "@/lib/upstream/tokens";
import { completion, startCannedUpstream, type CannedAnswer, type CannedUpstream } from "../helpers/canned-upstream";
import { seedMarketOn } from "../helpers/market-factories";
import { buyerBalance, callCompletions, seedBuyer } from "../helpers/router-factories";

const ONE_USDC = 1_000_000n;
const BEYOND_INT = 2_147_483_648;

let canned: CannedUpstream;
beforeAll(async () => {
  canned = await startCannedUpstream();
});
afterAll(() => canned.stop());

const market = (options: { tools?: boolean; billsReasoning?: boolean } = {}) => seedMarketOn(canned, options);

function offerHealth(offerId: string) {
  return db.offer.findUniqueOrThrow({
    where: { id: offerId },
    select: { consecutiveFailures: true, unhealthyUntil: true, lastFailureReason: true },
  });
}

/** Polls a condition of the system's own state (a barrier, not a timer): up to 10 s. */
async function until(what: string, condition: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 1000; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never happened: ${what}`);
}

const REPLY = "Here is the answer you asked for.";
const request = (modelId: string, content: string, maxTokens = 50) => ({
  model: modelId,
  messages: [{ role: "user", content }],
  max_tokens: maxTokens,
});

describe("a usage claim outside what the request allows", () => {
  it("of 2147483648 prompt tokens: the buyer gets the answer billed at our count, the claim is recorded, the offer's health pays", async () => {
    const { model, offer } = await market();
    const buyer = await seedBuyer(ONE_USDC);
    const body = request(model.id, "What is the capital of France?");
    canned.answer({
      status: 200,
      body: completion({ content: REPLY }, { prompt_tokens: BEYOND_INT, completion_tokens: 8, total_tokens: BEYOND_INT + 8 }),
    });

    const res = await callCompletions(buyer.key, body);

    expect(res.status).toBe(200);
    const data = await res.json();
    const ours = { prompt: await countPromptTokens(body as never), completion: await countReplyTokens({ content: REPLY }) };
    expect(data.usage).toMatchObject({ prompt_tokens: ours.prompt, completion_tokens: 8 });
    const charge = chargeMicros(burnMicroDiem(ours.prompt, 8, model), 100);
    expect(await buyerBalance(buyer.id)).toEqual({ balance: ONE_USDC - charge, held: 0n });
    // The claim is kept (clamped to what the column holds) beside what was billed, and the clear is a dispute.
    expect(await db.completion.findUniqueOrThrow({ where: { id: data.id } })).toMatchObject({
      promptTokens: ours.prompt,
      completionTokens: 8,
      claimedPromptTokens: 2_147_483_647,
      claimedCompletionTokens: 8,
      usageDisputed: true,
    });
    expect(await db.offerDay.findFirstOrThrow({ where: { offerId: offer.id } })).toMatchObject({ clears: 1, disputedClears: 1 });
    // An impossible claim counts against the offer like a failed answer: a failure in its streak, weighed across
    // buyers (one buyer's requests alone do not take it off the book).
    const health = await offerHealth(offer.id);
    expect(health.consecutiveFailures).toBe(1);
    expect(health.unhealthyUntil).toBeNull();
    expect(health.lastFailureReason).toContain(`${BEYOND_INT} prompt tokens`);
  });

  it("of more completion tokens than the max_tokens forwarded: billed at our count, a dispute and a health failure", async () => {
    const { model, offer } = await market();
    const buyer = await seedBuyer(ONE_USDC);
    const body = request(model.id, "Say something short.", 20);
    const ours = { prompt: await countPromptTokens(body as never), completion: await countReplyTokens({ content: REPLY }) };
    canned.answer({
      status: 200,
      body: completion({ content: REPLY }, { prompt_tokens: ours.prompt, completion_tokens: 21, total_tokens: ours.prompt + 21 }),
    });

    const res = await callCompletions(buyer.key, body);

    expect(res.status).toBe(200);
    const data = await res.json();
    expect(data.usage).toMatchObject({ prompt_tokens: ours.prompt, completion_tokens: ours.completion });
    expect(await db.completion.findUniqueOrThrow({ where: { id: data.id } })).toMatchObject({
      claimedCompletionTokens: 21,
      usageDisputed: true,
    });
    const health = await offerHealth(offer.id);
    expect(health.consecutiveFailures).toBe(1);
    expect(health.lastFailureReason).toContain("beyond the max_tokens of 20");

    // A claim within the bounds, even beyond the tolerance, is a dispute but no health failure (and the served
    // completion ends the offer's failure streak, as any does).
    await db.offer.update({ where: { id: offer.id }, data: { unhealthyUntil: null } });
    canned.answer({
      status: 200,
      body: completion({ content: REPLY }, { prompt_tokens: ours.prompt, completion_tokens: 20, total_tokens: ours.prompt + 20 }),
    });
    const again = await callCompletions(buyer.key, body);
    expect(again.status).toBe(200);
    expect((await again.json()).usage.completion_tokens).toBe(ours.completion);
    expect(await offerHealth(offer.id)).toMatchObject({ consecutiveFailures: 0, unhealthyUntil: null });
  });
});

// The embedded database is one backend session for every connection: a blocked clear would block the test too.
// eslint-disable-next-line no-restricted-properties -- set by the test setup when the suite runs on the embedded database
describe.skipIf(process.env.SVC_TEST_EMBEDDED_DB === "1")("one bad item in a clear batch", () => {
  it("does not fail, delay or re-run the others: they clear in the one statement, and the bad one gets its own outcome", async () => {
    const { model } = await market();
    const [first, a, b, poisoned, released] = await Promise.all([1, 2, 3, 4, 5].map(() => seedBuyer(ONE_USDC)));
    const blocker = new pg.Client({ connectionString: requireDatabaseUrl() });
    await blocker.connect();
    const activeHold = async (accountId: string) => (await db.hold.findFirstOrThrow({ where: { accountId, status: "active" } })).id;
    const honest = completion({ content: REPLY }, { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 });
    canned.answer(async (body): Promise<CannedAnswer> => {
      const said = (body.messages as { content: string }[])[0].content;
      if (said === "first") {
        // Barrier: the first clear's hold is locked, so its batch stays in flight and the next clears queue behind it.
        await blocker.query("BEGIN");
        await blocker.query("SELECT 1 FROM holds WHERE id = $1 FOR UPDATE", [await activeHold(first.id)]);
      }
      if (said === "released") await releaseHold(await activeHold(released.id)); // as the sweeper or a shutdown would
      if (said === "poisoned")
        return {
          status: 200,
          body: completion({ content: REPLY }, { prompt_tokens: BEYOND_INT, completion_tokens: 8, total_tokens: BEYOND_INT + 8 }),
        };
      return { status: 200, body: honest };
    });
    try {
      const firstDone = callCompletions(first.key, request(model.id, "first"));
      await until("the first clear waits on its hold's lock", async () => {
        const { rows } = await pgPool().query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%svc_clear_batch(%'",
        );
        return rows[0].n > 0;
      });
      const rest = [a, b, poisoned, released].map((buyer, i) =>
        callCompletions(buyer.key, request(model.id, ["a", "b", "poisoned", "released"][i])),
      );
      await until("four clears queue behind the first", () => queuedClears() === 4);
      await blocker.query("COMMIT");

      const [r0, rA, rB, rP, rR] = await Promise.all([firstDone, ...rest]);
      expect([r0.status, rA.status, rB.status, rP.status]).toEqual([200, 200, 200, 200]);
      // The poisoned claim was billed at our count like any claim outside the request's bounds.
      const p = await rP.json();
      expect(p.usage.prompt_tokens).toBe(await countPromptTokens(request(model.id, "poisoned") as never));
      // The hold released meanwhile: its own error, nothing charged.
      expect(rR.status).toBe(500);
      expect(await buyerBalance(released.id)).toEqual({ balance: ONE_USDC, held: 0n });
      expect(await db.completion.count({ where: { accountId: released.id } })).toBe(0);

      // The three cleared in one statement: one batch time (the statement's p_now) on all of them, one after the first's.
      const rows = await db.completion.findMany({ where: { accountId: { in: [a.id, b.id, poisoned.id] } }, select: { createdAt: true } });
      expect(rows).toHaveLength(3);
      expect(new Set(rows.map((r) => r.createdAt.getTime())).size).toBe(1);
      for (const buyer of [a, b, poisoned]) expect((await buyerBalance(buyer.id)).held).toBe(0n);
    } finally {
      await blocker.query("ROLLBACK").catch(() => undefined);
      await blocker.end();
    }
  });
});
