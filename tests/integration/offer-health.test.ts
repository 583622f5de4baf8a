/**
 * Supplier health that a buyer cannot game (issue 27 item 6), through the route with real upstreams: an answer too
 * large or too slow that the request itself asks for is not the supplier's failure, and one buyer alone cannot
 * cool an offer down, while failures from several buyers (or one no request can provoke) still do.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { reportUpstreamFailure } from "@/lib/supply/offer-health";
import { DEFAULT_MAX_RESPONSE_BYTES } from "@/lib/upstream/client";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { completion, startCannedUpstream, type CannedUpstream } from "../helpers/canned-upstream";
import { readError } from "../helpers/http";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { callCompletions, seedBuyer } from "../helpers/router-factories";

const ONE_USDC = 1_000_000n;
/** Distinct buyers whose failures in one streak cool an offer down (lib/supply/offer-health.ts). */
const DISTINCT_BUYERS_TO_COOL = 3;
const hello = { role: "user", content: "Hello" };

let reference: ReferenceUpstream;
let failing: ReferenceUpstream;
let stalling: ReferenceUpstream;
let canned: CannedUpstream;

beforeAll(async () => {
  [reference, failing, stalling, canned] = await Promise.all([
    startReferenceUpstream(),
    startReferenceUpstream({ defaultMode: "error:500" }),
    startReferenceUpstream({ defaultMode: "timeout" }),
    startCannedUpstream(),
  ]);
});
afterAll(async () => {
  await Promise.all([reference.stop(), failing.stop(), stalling.stop(), canned.stop()]);
});

/** A private model (its book is this test's own) with one offer on `via`, serving tools. */
async function market(via: { url: string; apiKey: string }) {
  const model = await seedPrivateModel({ supportsTools: true });
  const offer = await seedOffer({
    models: [{ id: model.id, upstreamModel: via === canned ? "canned-model" : "llama-3.3-70b" }],
    priceCents: 100,
    dailyCapacityMicroDiem: 1_000_000_000n,
    upstreamBaseUrl: via.url,
    upstreamApiKey: via.apiKey,
    features: { tools: true },
  });
  return { model, offer };
}

async function health(offerId: string) {
  return db.offer.findUniqueOrThrow({
    where: { id: offerId },
    select: { consecutiveFailures: true, unhealthyUntil: true, lastFailureReason: true },
  });
}

function buyers(n: number) {
  return Promise.all(Array.from({ length: n }, () => seedBuyer(ONE_USDC)));
}

/** A tool whose schema asks for 64 × 64 × 64 strings: the reference upstream's call is over 4 MiB (392 bytes sent). */
const hugeTool = {
  type: "function",
  function: {
    name: "grid",
    parameters: {
      type: "object",
      properties: {
        cells: {
          type: "array",
          minItems: 64,
          items: { type: "array", minItems: 64, items: { type: "array", minItems: 64, items: { type: "string" } } },
        },
      },
    },
  },
};

/** A promise and the function that resolves it: the barrier a held upstream answer waits on. */
function barrier() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return { released, release };
}

describe("an answer too large or too slow that the request asks for is not the supplier's failure", () => {
  it("a tool schema whose nested minItems make the reference upstream's answer exceed the limit: 502 for each buyer who sends it, the offer stays on the book and others are served", async () => {
    const { model, offer } = await market(reference);
    const request = { model: model.id, messages: [hello], tools: [hugeTool], tool_choice: "required" };
    expect(JSON.stringify(request.tools).length).toBeLessThan(400);

    // Three distinct attackers: were it the supplier's failure, that would be enough to cool it down.
    const answers = [];
    for (const attacker of await buyers(DISTINCT_BUYERS_TO_COOL)) answers.push(await callCompletions(attacker.key, request));
    expect(answers.map((res) => res.status)).toEqual([502, 502, 502]);
    for (const res of answers) {
      const error = await readError(res);
      expect(error.code).toBe("upstream_error");
      // The reference upstream builds the whole 4.9 MB call (about 2 s): on a loaded machine the 6 s test deadline
      // may come first, and a wait for up to 4,096 tokens is the request's doing too.
      expect(error.message).toMatch(new RegExp(`exceeded ${DEFAULT_MAX_RESPONSE_BYTES} bytes|timeout`));
      expect(error.message).toContain("does not count against the offer");
    }
    expect(await health(offer.id)).toMatchObject({ consecutiveFailures: 0, unhealthyUntil: null });

    const other = await seedBuyer(ONE_USDC);
    const served = await callCompletions(other.key, { model: model.id, messages: [hello], max_tokens: 20 });
    expect(served.status).toBe(200);
    expect(await db.clear.count({ where: { offerId: offer.id } })).toBe(1);
  }, 60_000);

  it("a schema explains an over-limit answer whatever max_tokens says (providers differ on cutting a constrained answer)", async () => {
    const { model, offer } = await market(canned);
    const args = JSON.stringify({ cells: Array.from({ length: 400_000 }, (_, i) => `cell_${i}`) });
    expect(args.length).toBeGreaterThan(DEFAULT_MAX_RESPONSE_BYTES);
    canned.answer({
      status: 200,
      body: completion({ content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "grid", arguments: args } }] }),
    });
    const request = { model: model.id, messages: [hello], tools: [hugeTool], tool_choice: "required", max_tokens: 10 };
    for (const attacker of await buyers(DISTINCT_BUYERS_TO_COOL)) {
      const res = await callCompletions(attacker.key, request);
      expect(res.status).toBe(502);
      expect((await readError(res)).message).toContain(`exceeded ${DEFAULT_MAX_RESPONSE_BYTES} bytes`);
    }
    expect(await health(offer.id)).toMatchObject({ consecutiveFailures: 0, unhealthyUntil: null });
  });

  it("top_logprobs: 20 with a large max_tokens explains an over-limit answer; the same answer to max_tokens 10 is the supplier's failure, counted", async () => {
    const { model, offer } = await market(canned);
    canned.answer({ status: 200, body: completion({ content: "x".repeat(DEFAULT_MAX_RESPONSE_BYTES + 1) }) });
    for (const attacker of await buyers(3)) {
      const res = await callCompletions(attacker.key, {
        model: model.id,
        messages: [hello],
        max_tokens: 4_000,
        logprobs: true,
        top_logprobs: 20,
      });
      expect(res.status).toBe(502);
    }
    expect(await health(offer.id)).toMatchObject({ consecutiveFailures: 0, unhealthyUntil: null });

    // 10 tokens cannot need 4 MiB: that answer is the upstream's doing. One buyer's failure is counted, not enough alone.
    const [buyer] = await buyers(1);
    const res = await callCompletions(buyer.key, { model: model.id, messages: [hello], max_tokens: 10 });
    expect(res.status).toBe(502);
    expect((await readError(res)).message).toContain("Retrying may route to another offer");
    expect(await health(offer.id)).toMatchObject({
      consecutiveFailures: 1,
      unhealthyUntil: null,
      lastFailureReason: expect.stringContaining("exceeded"),
    });
  });

  it("a timeout the request explains (no max_tokens: up to the model's 4,096 tokens) does not count, and other buyers are served meanwhile", async () => {
    const { model, offer } = await market(canned);
    const hold = barrier();
    const arrived: (() => void)[] = [];
    const allArrived = new Promise<void>((resolve) => arrived.push(resolve));
    let held = 0;
    canned.answer(async (body) => {
      if (body.max_tokens === 10)
        return { status: 200, body: completion({ content: "Served." }, { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 }) };
      if (++held === DISTINCT_BUYERS_TO_COOL) arrived[0]();
      await hold.released; // held until the test releases it, long after svc gave up on it
      return { status: 200, body: completion({ content: "too late" }) };
    });
    try {
      const slow = (await buyers(DISTINCT_BUYERS_TO_COOL)).map((b) => callCompletions(b.key, { model: model.id, messages: [hello] }));
      await allArrived;
      const [other] = await buyers(1);
      const served = await callCompletions(other.key, { model: model.id, messages: [hello], max_tokens: 10 });
      expect(served.status).toBe(200);
      for (const res of await Promise.all(slow)) {
        expect(res.status).toBe(502);
        expect((await readError(res)).message).toContain("timeout");
      }
      expect(await health(offer.id)).toMatchObject({ consecutiveFailures: 0, unhealthyUntil: null });
      const again = await callCompletions(other.key, { model: model.id, messages: [hello], max_tokens: 10 });
      expect(again.status).toBe(200);
    } finally {
      hold.release();
    }
  }, 30_000);

  it("a timeout the request does not explain (max_tokens 10) counts: one buyer's do not cool the offer down, three distinct buyers' do", async () => {
    const { model, offer } = await market(stalling);
    const [first, second, third, fourth] = await buyers(4);
    const ask = (key: string) => callCompletions(key, { model: model.id, messages: [hello], max_tokens: 10 });

    expect((await Promise.all([ask(first.key), ask(first.key)])).map((r) => r.status)).toEqual([502, 502]);
    expect(await health(offer.id)).toMatchObject({ consecutiveFailures: 2, unhealthyUntil: null });

    expect((await Promise.all([ask(second.key), ask(third.key)])).map((r) => r.status)).toEqual([502, 502]);
    const cooled = await health(offer.id);
    expect(cooled.consecutiveFailures).toBe(4);
    expect(cooled.unhealthyUntil!.getTime()).toBeGreaterThan(Date.now());
    const refused = await ask(fourth.key);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("x-svc-error-code")).toBe("no_healthy_supplier");
  }, 40_000);
});

describe("failures weigh across buyers", () => {
  it("HTTP 500s from one buyer, however many, leave the offer on the book; a third distinct buyer's cools it down and the next buyer gets 503", async () => {
    const { model, offer } = await market(failing);
    const [first, second, third, fourth] = await buyers(4);
    const ask = (key: string) => callCompletions(key, { model: model.id, messages: [hello], max_tokens: 10 });

    for (let i = 0; i < 6; i++) expect((await ask(first.key)).status).toBe(502);
    expect(await health(offer.id)).toMatchObject({ consecutiveFailures: 6, unhealthyUntil: null });
    expect((await ask(second.key)).status).toBe(502);
    expect((await health(offer.id)).unhealthyUntil).toBeNull();
    expect((await ask(third.key)).status).toBe(502);
    expect((await health(offer.id)).unhealthyUntil!.getTime()).toBeGreaterThan(Date.now());
    const refused = await ask(fourth.key);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("x-svc-error-code")).toBe("no_healthy_supplier");
  });

  it("an upstream that fails only some buyers: a completion served between failures ends the streak, so they do not add up", async () => {
    const { model, offer } = await market(canned);
    canned.answer((body) =>
      JSON.stringify(body.messages).includes("target")
        ? { status: 500, body: { error: { message: "not for you" } } }
        : { status: 200, body: completion({ content: "ok" }, { prompt_tokens: 8, completion_tokens: 1, total_tokens: 9 }) },
    );
    const targeted = { role: "user", content: "I am a target" };
    const [a, b, c, d, happy] = await buyers(5);
    const ask = (key: string, message = targeted) => callCompletions(key, { model: model.id, messages: [message], max_tokens: 10 });

    expect((await ask(a.key)).status).toBe(502);
    expect((await ask(b.key)).status).toBe(502);
    expect((await ask(happy.key, hello)).status).toBe(200);
    expect((await ask(c.key)).status).toBe(502);
    expect((await ask(d.key)).status).toBe(502);
    expect(await health(offer.id)).toMatchObject({ consecutiveFailures: 2, unhealthyUntil: null });
    // A third distinct buyer in the same streak: now it is the offer.
    expect((await ask(a.key)).status).toBe(502);
    expect((await health(offer.id)).unhealthyUntil!.getTime()).toBeGreaterThan(Date.now());
  });

  it("the only buyer of a model: an HTTP 500 does not cool the offer down, a refused connection (which no request can provoke) does at once", async () => {
    const [buyer] = await buyers(1);
    const sick = await market(failing);
    expect((await callCompletions(buyer.key, { model: sick.model.id, messages: [hello], max_tokens: 10 })).status).toBe(502);
    expect(await health(sick.offer.id)).toMatchObject({ consecutiveFailures: 1, unhealthyUntil: null });

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));
    const dead = await market({ url: `http://127.0.0.1:${port}/v1`, apiKey: "k" });
    const res = await callCompletions(buyer.key, { model: dead.model.id, messages: [hello], max_tokens: 10 });
    expect(res.status).toBe(502);
    expect((await readError(res)).message).toContain("Could not reach the upstream");
    expect((await health(dead.offer.id)).unhealthyUntil!.getTime()).toBeGreaterThan(Date.now());
  });
});

describe("the streak", () => {
  const t0 = new Date("2099-03-01T12:00:00.000Z");
  const at = (ms: number) => new Date(t0.getTime() + ms);
  const answer = (accountId: string, ms: number) => ({ accountId, cause: "answer" as const, now: at(ms) });

  it("the lone buyer of a quiet offer: five failures over a minute cool it down, five within seconds do not", async () => {
    const { offer } = await market(failing);
    const lone = randomUUID();
    for (const ms of [0, 1_000, 2_000, 3_000, 4_000])
      expect((await reportUpstreamFailure(offer.id, "HTTP 500", answer(lone, ms)))?.cooledDown).toBe(false);
    expect((await reportUpstreamFailure(offer.id, "HTTP 500", answer(lone, 59_999)))?.cooledDown).toBe(false);
    expect(await reportUpstreamFailure(offer.id, "HTTP 500", answer(lone, 60_000))).toEqual({
      consecutiveFailures: 7,
      unhealthyUntil: at(90_000),
      cooledDown: true,
    });
    // The probe after the cooldown fails too: the second cooldown of the streak is 60 s.
    expect((await reportUpstreamFailure(offer.id, "HTTP 500", answer(lone, 90_000)))?.unhealthyUntil).toEqual(at(150_000));
  });

  it("ends 10 minutes after its last failure (and its cooldown): older failures do not add up with new ones", async () => {
    const { offer } = await market(failing);
    await reportUpstreamFailure(offer.id, "HTTP 500", answer(randomUUID(), 0));
    await reportUpstreamFailure(offer.id, "HTTP 500", answer(randomUUID(), 1_000));
    expect(await reportUpstreamFailure(offer.id, "HTTP 500", answer(randomUUID(), 1_000 + 10 * 60_000 + 1))).toEqual({
      consecutiveFailures: 1,
      unhealthyUntil: null,
      cooledDown: false,
    });
  });

  it("counts concurrent failures exactly, cools down once, and keeps at most three buyers", async () => {
    const { offer } = await market(failing);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => reportUpstreamFailure(offer.id, "HTTP 503", answer(randomUUID(), 0))),
    );
    expect(results.filter((r) => r!.cooledDown)).toHaveLength(1);
    const row = await db.offer.findUniqueOrThrow({ where: { id: offer.id } });
    expect(row).toMatchObject({ consecutiveFailures: 20, unhealthyUntil: at(30_000), failureStreakCooldowns: 1 });
    expect(row.failureStreakBuyers).toHaveLength(DISTINCT_BUYERS_TO_COOL);
  });

  it("a report that names no buyer (the two-argument form) cools the offer down at once", async () => {
    const { offer } = await market(failing);
    const result = await reportUpstreamFailure(offer.id, "claimed usage beyond what the request allows");
    expect(result).toMatchObject({ consecutiveFailures: 1, cooledDown: true });
    expect(result!.unhealthyUntil!.getTime()).toBeGreaterThan(Date.now());
  });
});
