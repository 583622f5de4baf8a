import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { assertLedgerInvariants } from "@/lib/ledger/invariants";
import { burnMicroDiem, chargeMicros } from "@/lib/money";
import { releaseHold } from "@/lib/router/holds";
import { allowedClaim } from "@/lib/upstream/metering";
import { promptMaterial, tokenBounds } from "@/lib/upstream/tokens";
import { startReferenceUpstream, type ReferenceUpstream } from "../../scripts/reference-upstream/server";
import { AnswerGate } from "../helpers/answer-gate";
import { startAppProcess, type AppProcess } from "../helpers/app-process";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { buyerBalance, seedBuyer } from "../helpers/router-factories";

/**
 * The batched hot path (svc_reserve_batch / svc_clear_batch through lib/router/group-commit.ts) across two app
 * processes on one database, and a process killed with a batch in flight.
 */

const MAX_TOKENS = 200;
const messages = [{ role: "user" as const, content: "Count to three, please." }];

// The upstream holds its answers until the test lets them go (in this process, so for the app processes too): every
// parallel request has reserved, or been refused, before any clears, and the counts are exact however slow the machine.
const gate = new AnswerGate();
let held: ReferenceUpstream;
const UNHURRIED = { UPSTREAM_TIMEOUT_MS: "600000" };
let apps: AppProcess[] = [];
beforeAll(async () => {
  held = await startReferenceUpstream({ gate: gate.pass });
  // The first answer waits at the gate for as long as the slowest of the parallel reservations takes: the apps run
  // with an upstream timeout no slow machine reaches (the suite's 6 s is for the tests that wait one out).
  apps = await Promise.all([startAppProcess(UNHURRIED), startAppProcess(UNHURRIED)]);
}, 60_000);
afterAll(async () => {
  await Promise.all(apps.map((a) => a.kill()));
  await held.stop();
});

function worstCase(model: { inputMicroDiemPerMTok: bigint; outputMicroDiemPerMTok: bigint }, priceCents: number) {
  const burn = burnMicroDiem(allowedClaim(tokenBounds(promptMaterial({ messages })).upper), MAX_TOKENS, model);
  return { burn, charge: chargeMicros(burn, priceCents) };
}

function post(base: string, key: string, body: unknown) {
  return fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
}

/**
 * `n` requests at once, alternating between the two app processes, answered by the upstream once each has been refused
 * or reached it (`atMost` the design allows through); statuses and error codes counted.
 */
async function fireAcrossProcesses(n: number, key: string, modelId: string, atMost = n) {
  const responses = await gate.burst(n, (i) => post(apps[i % 2].url, key, { model: modelId, messages, max_tokens: MAX_TOKENS }), atMost);
  const counts: Record<string, number> = {};
  for (const r of responses) {
    const code = r.status === 200 ? "200" : `${r.status} ${((await r.json()) as { error: { code: string } }).error.code}`;
    counts[code] = (counts[code] ?? 0) + 1;
    if (r.status === 200) await r.body?.cancel().catch(() => undefined);
  }
  return counts;
}

/** An offer at 100¢ on the held upstream (each completion stays in flight until the test lets its answer go). */
function seedHeldOffer(modelId: string, dailyCapacityMicroDiem = 1_000_000_000n) {
  return seedOffer({
    models: [{ id: modelId, upstreamModel: "llama-3.3-70b" }],
    priceCents: 100,
    dailyCapacityMicroDiem,
    upstreamBaseUrl: held.url,
    upstreamApiKey: held.apiKey,
  });
}

describe("two app processes reserving against the same limits at once", () => {
  it("a balance covering 30 worst cases: exactly 30 answered, 90 get 402, across both processes", async () => {
    const model = await seedPrivateModel();
    const offer = await seedHeldOffer(model.id);
    const { charge } = worstCase(model, 100);
    const buyer = await seedBuyer(charge * 30n);

    expect(await fireAcrossProcesses(120, buyer.key, model.id, 30)).toEqual({ "200": 30, "402 insufficient_balance": 90 });

    const clears = await db.clear.findMany({ where: { offerId: offer.id } });
    expect(clears).toHaveLength(30);
    const after = await buyerBalance(buyer.id);
    expect(after).toEqual({ balance: charge * 30n - clears.reduce((s, c) => s + c.chargeMicros, 0n), held: 0n });
  }, 60_000);

  it("a key spend limit covering 30 worst cases: exactly 30 answered, 90 get 402 spend_limit_exceeded", async () => {
    const model = await seedPrivateModel();
    await seedHeldOffer(model.id);
    const { charge } = worstCase(model, 100);
    const buyer = await seedBuyer(1_000_000_000n, { spend_limit: charge * 30n });

    expect(await fireAcrossProcesses(120, buyer.key, model.id, 30)).toEqual({ "200": 30, "402 spend_limit_exceeded": 90 });

    const key = await db.apiKey.findUniqueOrThrow({ where: { id: buyer.apiKeyId } });
    expect(await db.completion.count({ where: { apiKeyId: buyer.apiKeyId } })).toBe(30);
    expect(key.spentMicros).toBeLessThanOrEqual(charge * 30n);
  }, 60_000);

  it("an offer whose capacity covers 30 worst cases: exactly 30 answered, 90 get 503 no_capacity", async () => {
    const model = await seedPrivateModel();
    const { burn } = worstCase(model, 100);
    const offer = await seedHeldOffer(model.id, burn * 30n);
    const buyer = await seedBuyer(1_000_000_000n);

    expect(await fireAcrossProcesses(120, buyer.key, model.id, 30)).toEqual({ "200": 30, "503 no_capacity": 90 });

    const day = await db.offerDay.findFirstOrThrow({ where: { offerId: offer.id } });
    expect(day.heldMicroDiem).toBe(0n);
    expect(day.clears).toBe(30);
    expect(day.burnedMicroDiem).toBeLessThanOrEqual(burn * 30n);
  }, 60_000);

  it("a key revoked while another process has it cached is refused at once by both, and reserves nothing", async () => {
    const model = await seedPrivateModel();
    await seedHeldOffer(model.id);
    const buyer = await seedBuyer(1_000_000_000n);
    // Both processes have now seen the key live (and cached it).
    expect(await fireAcrossProcesses(2, buyer.key, model.id)).toEqual({ "200": 2 });

    await db.apiKey.update({ where: { id: buyer.apiKeyId }, data: { revokedAt: new Date() } });
    expect(await fireAcrossProcesses(4, buyer.key, model.id)).toEqual({ "401 invalid_api_key": 4 });
    expect(await db.hold.count({ where: { apiKeyId: buyer.apiKeyId } })).toBe(2);
  }, 60_000);
});

describe("the clear", () => {
  it("meters with the list prices the hold snapshotted, not the catalog's prices at clearing time", async () => {
    const model = await seedPrivateModel();
    await seedHeldOffer(model.id);
    const buyer = await seedBuyer(1_000_000_000n);

    const pending = post(apps[0].url, buyer.key, { model: model.id, messages, max_tokens: MAX_TOKENS });
    // Reserved and at the upstream, whose answer waits while the catalog's prices go up tenfold.
    await gate.until(1);
    const hold = await db.hold.findFirstOrThrow({ where: { accountId: buyer.id } });
    expect([hold.inputMicroDiemPerMTok, hold.outputMicroDiemPerMTok]).toEqual([model.inputMicroDiemPerMTok, model.outputMicroDiemPerMTok]);
    await db.model.update({
      where: { id: model.id },
      data: { inputMicroDiemPerMTok: model.inputMicroDiemPerMTok * 10n, outputMicroDiemPerMTok: model.outputMicroDiemPerMTok * 10n },
    });
    gate.release();

    const res = await pending;
    expect(res.status).toBe(200);
    const { usage } = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const clear = await db.clear.findFirstOrThrow({ where: { completion: { accountId: buyer.id } } });
    expect(clear.burnMicroDiem).toBe(burnMicroDiem(usage.prompt_tokens, usage.completion_tokens, model));
  }, 30_000);
});

describe("a process killed with a batch in flight", () => {
  it("loses nothing and charges nothing twice: every clear is whole, every other hold is swept back", async () => {
    const fast = await startReferenceUpstream({ defaultMode: "latency:20" });
    const victim = await startAppProcess();
    try {
      const model = await seedPrivateModel();
      const offer = await seedOffer({
        models: [{ id: model.id, upstreamModel: "llama-3.3-70b" }],
        priceCents: 100,
        dailyCapacityMicroDiem: 1_000_000_000_000n,
        upstreamBaseUrl: fast.url,
        upstreamApiKey: fast.apiKey,
      });
      const initial = 1_000_000_000n;
      const buyer = await seedBuyer(initial);

      // 32 clients in a loop against the victim until it dies.
      let answered = 0;
      let stop = false;
      const clients = Array.from({ length: 32 }, async () => {
        while (!stop) {
          const res = await post(victim.url, buyer.key, { model: model.id, messages, max_tokens: 16 }).catch(() => null);
          if (!res) return;
          if (res.status === 200) answered += 1;
          await res.body?.cancel().catch(() => undefined);
        }
      });

      // Kill it (SIGKILL: no shutdown hooks) the moment one of its batch statements is executing in PostgreSQL.
      // The embedded database is one backend that serves one connection at a time, so no other connection can see
      // a statement running there: kill it mid-stream instead, once it has answered a few (32 clients keep its
      // batches in flight).
      // eslint-disable-next-line no-restricted-properties -- set by the test setup when the suite runs on the embedded database
      const embedded = process.env.SVC_TEST_EMBEDDED_DB === "1";
      let seen = false;
      for (let i = 0; i < 1000 && !seen; i++) {
        if (embedded) {
          await new Promise((r) => setTimeout(r, 20));
          seen = answered >= 10;
          continue;
        }
        const running = await db.$queryRaw<{ n: bigint }[]>`
          SELECT COUNT(*) AS n FROM pg_stat_activity
          WHERE state = 'active' AND (query LIKE '%svc_clear_batch(%' OR query LIKE '%svc_reserve_batch(%') AND pid <> pg_backend_pid()`;
        seen = running[0].n > 0n && answered > 0;
      }
      await victim.kill("SIGKILL");
      stop = true;
      await Promise.all(clients);
      expect(seen).toBe(true);
      expect(
        await fetch(`${victim.url}/v1/models`).then(
          () => "answered",
          () => "dead",
        ),
      ).toBe("dead");
      // PostgreSQL finishes or rolls back what the dead process left; wait until none of its statements runs.
      for (let i = 0; i < 100; i++) {
        const [{ n }] = await db.$queryRaw<{ n: bigint }[]>`
          SELECT COUNT(*) AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%svc_%_batch(%' AND pid <> pg_backend_pid()`;
        if (n === 0n) break;
        await new Promise((r) => setTimeout(r, 50));
      }

      // What was reserved but never cleared is released, as the sweeper does past its deadline: this buyer's holds only
      // (a sweep a day ahead would release every other test file's live holds too, a stream's among them).
      const left = await db.hold.findMany({ where: { accountId: buyer.id, status: "active" }, select: { id: true } });
      for (const { id } of left) await releaseHold(id);
      await assertLedgerInvariants();

      const clears = await db.clear.findMany({ where: { offerId: offer.id }, include: { completion: true } });
      const charged = clears.reduce((s, c) => s + c.chargeMicros, 0n);
      expect(clears.length).toBeGreaterThanOrEqual(answered); // every answer the clients got was cleared
      expect(await db.hold.count({ where: { accountId: buyer.id, status: "active" } })).toBe(0);
      expect(await db.hold.count({ where: { accountId: buyer.id, status: "cleared" } })).toBe(clears.length);
      expect(await db.journalEntry.count({ where: { clearId: { in: clears.map((c) => c.id) } } })).toBe(clears.length);
      expect(await buyerBalance(buyer.id)).toEqual({ balance: initial - charged, held: 0n });
      expect((await db.apiKey.findUniqueOrThrow({ where: { id: buyer.apiKeyId } })).spentMicros).toBe(charged);
      const day = await db.offerDay.findFirstOrThrow({ where: { offerId: offer.id } });
      expect(day.heldMicroDiem).toBe(0n);
      expect(day.burnedMicroDiem).toBe(clears.reduce((s, c) => s + c.burnMicroDiem, 0n));
      expect(day.clears).toBe(clears.length);
    } finally {
      await victim.kill("SIGKILL");
      await fast.stop();
    }
  }, 60_000);
});
