import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { getBook } from "@/lib/market/book";
import { runProbeRound } from "@/lib/probes";
import { startProbation } from "@/lib/probes/probation";
import { fundPlatformProbes } from "@/lib/probes/funding";
import { platformFundsAvailable } from "@/lib/ledger/probe-payments";
import { POST as postOffer } from "@/app/v1/supply/offers/route";
import { PATCH as patchOffer } from "@/app/v1/supply/offers/[id]/route";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, routeParams } from "../helpers/http";
import { probeEvidence } from "@/lib/supply/probe-evidence";
import { PROBE_REASONING_EFFORT } from "@/lib/probes/catalog";
import { burnMicroDiem, chargeMicros, splitCharge } from "@/lib/money";
import { metrics } from "@/lib/ops/metrics";
import { defaultReasoningBudget } from "@/lib/upstream/metering";
import { utcDay } from "@/lib/supply/capacity";
import { updateOffer } from "@/lib/supply/update-offer";
import { startReferenceUpstream, type ReferenceUpstream, type UpstreamMode } from "@/scripts/reference-upstream/server";
import { seedPlatformBalance } from "../helpers/ledger-factories";
import { seedOffer, seedPrivateModel } from "../helpers/market-factories";
import { callCompletions, seedBuyer } from "../helpers/router-factories";

/**
 * Fidelity probes against real HTTP upstreams (the reference upstream) that differ as providers do: honest ones, one
 * serving another model under the name, one breaking schemas, one truncating. Every test probes its own private
 * model only (other files share the database), and gives the round a budget relative to what today has spent.
 */

const UPSTREAM_MODEL = "llama-3.3-70b";
const upstreams: ReferenceUpstream[] = [];

async function upstream(mode: UpstreamMode = "ok") {
  const u = await startReferenceUpstream({ defaultMode: mode });
  upstreams.push(u);
  return u;
}

async function offerOn(modelId: string, u: ReferenceUpstream, priceCents: number, capacity = 1_000_000_000n) {
  return seedOffer({
    models: [{ id: modelId, upstreamModel: UPSTREAM_MODEL }],
    priceCents,
    dailyCapacityMicroDiem: capacity,
    upstreamBaseUrl: u.url,
    upstreamApiKey: u.apiKey,
    features: { tools: true, json_schema: true },
  });
}

async function probeModel() {
  return seedPrivateModel({ supportsTools: true, supportsJsonSchema: true });
}

/** Today's committed probe spend plus `more`: a budget that lets this round spend `more` at most. */
async function budgetLeaving(more: bigint) {
  const day = await db.probeDay.findUnique({ where: { day: utcDay() } });
  return (day?.committedMicros ?? 0n) + more;
}

async function skippedFor(reason: string) {
  const metric = await metrics.probesSkipped.get();
  return metric.values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

beforeAll(async () => {
  await seedPlatformBalance(1_000_000_000n);
});

afterAll(async () => {
  await Promise.all(upstreams.map((u) => u.stop()));
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

const servers: Server[] = [];

/** What the probes of #23 sent, that a supplier could tell from buyers' requests by. */
const OLD_PROBE_PROMPTS = [
  "What is the capital of France? Answer with one word only, no punctuation.",
  "What is 17 + 25? Answer with the number only.",
  'What is the opposite of "hot"? Answer with one word only, no punctuation.',
  "What is 6 times 7? Reply with a JSON object whose `answer` is the number.",
  "Call get_weather for Paris, in celsius.",
];

type Seen = { requestId: string | null; body: Record<string, unknown>; probeShaped: boolean };

/**
 * A supplier's server that tries to tell probes from buyers by every tell the probes had (no X-Request-Id, seed 23,
 * temperature 0 with max_tokens 128, the fixed prompts): what looks like a probe goes to the real model (an honest
 * upstream), everything else to another model (a substituting one), as a real proxy in front of two deployments would.
 */
async function detectingUpstream(real: ReferenceUpstream, other: ReferenceUpstream) {
  const seen: Seen[] = [];
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  };
  const server = createServer((req, res) => {
    void (async () => {
      const raw = req.method === "POST" ? await read(req) : "";
      let target = real;
      if (req.method === "POST") {
        const body = JSON.parse(raw) as Record<string, unknown>;
        const messages = (body.messages ?? []) as { role: string; content: unknown }[];
        const lastUser = [...messages].reverse().find((m) => m.role === "user")?.content;
        const requestId = (req.headers["x-request-id"] as string | undefined) ?? null;
        const probeShaped =
          requestId === null ||
          body.seed === 23 ||
          (body.temperature === 0 && body.max_tokens === 128) ||
          OLD_PROBE_PROMPTS.includes(String(lastUser));
        seen.push({ requestId, body, probeShaped });
        target = probeShaped ? real : other;
      }
      const upstreamRes = await fetch(`${target.url}${req.url!.replace(/^\/v1/, "")}`, {
        method: req.method,
        headers: { authorization: `Bearer ${target.apiKey}`, "content-type": "application/json" },
        body: req.method === "POST" ? raw : undefined,
      });
      res.writeHead(upstreamRes.status, { "content-type": "application/json" });
      res.end(await upstreamRes.text());
    })().catch(() => res.destroy());
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, apiKey: real.apiKey, seen };
}

describe("fidelity probes", () => {
  it("flag a substituting offer with the evidence, take it off the book and out of routing, pay every probe, and relist it once fixed", async () => {
    const model = await probeModel();
    const honest = await Promise.all([upstream(), upstream(), upstream()]);
    const substituting = await upstream("substitute:qwen3-235b");
    const [h1, h2, h3] = [
      await offerOn(model.id, honest[0], 80),
      await offerOn(model.id, honest[1], 90),
      await offerOn(model.id, honest[2], 100),
    ];
    // The cheapest offer serves another model: without the probes every buyer's request would go to it.
    const sub = await offerOn(model.id, substituting, 50);
    expect((await getBook(model.id, new Date())).best_price_cents).toBe(50);

    const report = await runProbeRound({ modelIds: [model.id], budgetMicros: await budgetLeaving(100_000_000n), reference: null });
    expect(report.offers).toBe(4);
    expect(report.flagged).toEqual([sub.id]);
    expect(report.passing.sort()).toEqual([h1.id, h2.id, h3.id].sort());
    expect(report.sent).toBe(4 * 5);
    expect(substituting.requestCount()).toBe(5);

    const flagged = await db.offer.findUniqueOrThrow({ where: { id: sub.id } });
    expect(flagged).toMatchObject({ probeStatus: "flagged", probeDelisted: true });
    expect(flagged.probeFlaggedAt).not.toBeNull();
    expect(flagged.probeFlagReason).toMatch(/model/);
    expect(flagged.probeFlagReason).toMatch(/consensus/);
    for (const id of [h1.id, h2.id, h3.id]) {
      expect(await db.offer.findUniqueOrThrow({ where: { id } })).toMatchObject({ probeStatus: "passing", probeDelisted: false });
    }

    const evidence = await probeEvidence([sub.id, h1.id, h2.id]);
    expect(evidence.get(h1.id)).toEqual([]);
    const subEvidence = evidence.get(sub.id)!;
    expect(subEvidence).toContainEqual(
      expect.objectContaining({ probe: "echo", check: "model", expected: UPSTREAM_MODEL, got: "qwen3-235b" }),
    );
    const consensus = subEvidence.find((e) => e.check === "consensus" && e.probe === "echo")!;
    expect(consensus.expected).toMatch(/^3 of 3 other offers: .*standing in for llama-3\.3-70b/);
    expect(consensus.got).toMatch(/standing in for qwen3-235b/);
    for (const e of subEvidence) expect((e.got ?? "").length).toBeLessThanOrEqual(320);

    // Paid like a buyer: each run's charge is the offer's price of its billed tokens; the supplier earned its share,
    // the platform's fee accounts paid exactly that; the burn counts on the offer's day.
    const runs = await db.probeRun.findMany({
      where: { roundId: report.roundId },
      include: { journalEntry: { include: { lines: true } } },
    });
    expect(runs).toHaveLength(20);
    let platformLines = 0n;
    let shares = 0n;
    for (const run of runs) {
      expect(run.status).toBe("settled");
      const burn = burnMicroDiem(run.promptTokens!, run.completionTokens!, {
        inputMicroDiemPerMTok: model.inputMicroDiemPerMTok,
        outputMicroDiemPerMTok: model.outputMicroDiemPerMTok,
      });
      expect(run.burnMicroDiem).toBe(burn);
      expect(run.chargeMicros).toBe(chargeMicros(burn, run.priceCents));
      expect(run.chargeMicros).toBeGreaterThan(0n);
      const split = splitCharge(run.chargeMicros, env.PLATFORM_FEE_BPS);
      expect([run.supplierMicros, run.feeMicros]).toEqual([split.supplierMicros, split.feeMicros]);
      expect(run.journalEntry?.kind).toBe("probe");
      shares += run.supplierMicros;
      platformLines += run.journalEntry!.lines.filter((l) => l.amountMicros < 0n).reduce((s, l) => s + l.amountMicros, 0n);
    }
    expect(platformLines).toBe(-shares);
    expect(report.chargedMicros).toBe(runs.reduce((s, r) => s + r.chargeMicros, 0n));
    for (const offer of [h1, h2, h3, sub]) {
      const own = runs.filter((r) => r.offerId === offer.id);
      const earnings = await db.ledgerAccount.findUniqueOrThrow({
        where: { kind_ownerId: { kind: "supplier", ownerId: offer.supplierId } },
      });
      expect(earnings.balanceMicros).toBe(own.reduce((s, r) => s + r.supplierMicros, 0n));
      const day = await db.offerDay.findUniqueOrThrow({ where: { offerId_day: { offerId: offer.id, day: utcDay() } } });
      expect(day.burnedMicroDiem).toBe(own.reduce((s, r) => s + r.burnMicroDiem, 0n));
    }

    // Off the book and out of routing, although it is the cheapest.
    const book = await getBook(model.id, new Date());
    expect(book.best_price_cents).toBe(80);
    expect(book.offers).toBe(3);
    const buyer = await seedBuyer(10_000_000n);
    const before = substituting.requestCount();
    const res = await callCompletions(buyer.key, { model: model.id, messages: [{ role: "user", content: "hello" }] });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-svc-price-cents")).toBe("80");
    expect(substituting.requestCount()).toBe(before);

    // The supplier fixes its upstream (a flagged offer waits out its backoff, but a new upstream is due at once): the
    // next round passes it and puts it back on the book.
    const fixed = await upstream();
    await updateOffer(sub.supplierId, sub.id, { upstream_base_url: fixed.url, upstream_api_key: fixed.apiKey });
    const next = await runProbeRound({ modelIds: [model.id], budgetMicros: await budgetLeaving(100_000_000n), reference: null });
    expect(next.flagged).toEqual([]);
    expect(next.passing).toContain(sub.id);
    expect(await db.offer.findUniqueOrThrow({ where: { id: sub.id } })).toMatchObject({
      probeStatus: "passing",
      probeDelisted: false,
      probeFlagReason: null,
    });
    expect((await probeEvidence([sub.id])).get(sub.id)).toEqual([]);
    expect((await getBook(model.id, new Date())).best_price_cents).toBe(50);
  });

  it("catch, within one probe set, a supplier that serves anything probe-shaped with the real model and buyers with another", async () => {
    const model = await probeModel();
    const honest = await Promise.all([upstream(), upstream(), upstream()]);
    for (const [i, u] of honest.entries()) await offerOn(model.id, u, 80 + i * 10);
    const real = await upstream();
    const other = await upstream("substitute:qwen3-235b");
    const detecting = await detectingUpstream(real, other);
    const cheat = await seedOffer({
      models: [{ id: model.id, upstreamModel: UPSTREAM_MODEL }],
      priceCents: 50,
      dailyCapacityMicroDiem: 1_000_000_000n,
      upstreamBaseUrl: detecting.url,
      upstreamApiKey: detecting.apiKey,
      features: { tools: true, json_schema: true },
    });

    // It works as intended against the old tells: a buyer's request (the router's forward) gets the other model ...
    const buyer = await seedBuyer(10_000_000n);
    const res = await callCompletions(buyer.key, { model: model.id, messages: [{ role: "user", content: "hello" }] });
    expect(res.status).toBe(200);
    expect(detecting.seen.at(-1)).toMatchObject({ probeShaped: false });
    expect(other.requestCount()).toBe(1);
    // ... and a request shaped like the old probes gets the real one.
    const old = await fetch(`${detecting.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: UPSTREAM_MODEL,
        messages: [{ role: "user", content: OLD_PROBE_PROMPTS[0] }],
        max_tokens: 128,
        temperature: 0,
        seed: 23,
      }),
    });
    expect(((await old.json()) as { model: string }).model).toBe(UPSTREAM_MODEL);

    const before = detecting.seen.length;
    const report = await runProbeRound({ modelIds: [model.id], budgetMicros: await budgetLeaving(100_000_000n), reference: null });
    expect(report.flagged).toEqual([cheat.id]);
    expect(report.passing).toHaveLength(3);
    const probes = detecting.seen.slice(before);
    expect(probes).toHaveLength(5);
    for (const p of probes) {
      // Not one probe looked like a probe: each carried a request id of the router's form and no old tell.
      expect(p.probeShaped).toBe(false);
      expect(p.requestId).toMatch(/^req_[0-9a-f]{24}$/);
      expect(p.body).not.toHaveProperty("seed");
      expect(Object.keys(p.body).slice(0, 4)).toEqual(["model", "max_tokens", "stream", "messages"]);
    }
    expect(new Set(probes.map((p) => p.requestId)).size).toBe(5);
    expect(real.requestCount()).toBe(1);
    expect(await db.offer.findUniqueOrThrow({ where: { id: cheat.id } })).toMatchObject({ probeStatus: "flagged", probeDelisted: true });
    const checks = new Set((await probeEvidence([cheat.id])).get(cheat.id)!.map((e) => e.check));
    expect(checks).toContain("model");
    expect(checks).toContain("consensus");
  });

  it("flag broken schemas, broken tool calls and truncation; with PROBE_DELIST_FLAGGED off they stay on the book", async () => {
    const model = await probeModel();
    const honest = await offerOn(model.id, await upstream(), 100);
    const breaking = await offerOn(model.id, await upstream("break-schema"), 100);
    const truncating = await offerOn(model.id, await upstream("truncate"), 100);
    const saved = env.PROBE_DELIST_FLAGGED;
    env.PROBE_DELIST_FLAGGED = false;
    try {
      const report = await runProbeRound({ modelIds: [model.id], budgetMicros: await budgetLeaving(100_000_000n), reference: null });
      expect(report.flagged.sort()).toEqual([breaking.id, truncating.id].sort());
      expect(report.passing).toEqual([honest.id]);
    } finally {
      env.PROBE_DELIST_FLAGGED = saved;
    }
    const evidence = await probeEvidence([breaking.id, truncating.id]);
    const broken = evidence.get(breaking.id)!;
    expect(broken.map((e) => `${e.probe}:${e.check}`).sort()).toEqual(["json:json_schema", "tool:tool_schema"]);
    expect(broken.find((e) => e.check === "json_schema")?.got).toMatch(/__broken__/);
    const truncated = evidence.get(truncating.id)!;
    expect(new Set(truncated.map((e) => e.check))).toEqual(new Set(["truncated"]));
    // Cut short where the answer fits easily; the limit probe, which asks for more than its max_tokens, passes.
    expect(truncated.map((e) => e.probe).sort()).toEqual(["chat", "echo", "json"]);

    for (const id of [breaking.id, truncating.id]) {
      expect(await db.offer.findUniqueOrThrow({ where: { id } })).toMatchObject({ probeStatus: "flagged", probeDelisted: false });
    }
    expect((await getBook(model.id, new Date())).offers).toBe(3);
  });

  it("ask a model that bills reasoning for reasoning, flag an offer claiming more than is plausible, and pay it only the bound", async () => {
    const model = await seedPrivateModel({ supportsTools: true, supportsJsonSchema: true, billsReasoning: true });
    const honest = await Promise.all([offerOn(model.id, await upstream(), 100), offerOn(model.id, await upstream(), 100)]);
    const padding = await offerOn(model.id, await upstream("pad-reasoning"), 100);
    // The same upstream on a model that does not bill reasoning is not asked for any, so it claims none.
    const plainModel = await probeModel();
    const plain = await offerOn(plainModel.id, await upstream("pad-reasoning"), 100);

    const report = await runProbeRound({
      modelIds: [model.id, plainModel.id],
      budgetMicros: await budgetLeaving(100_000_000n),
      reference: null,
    });
    expect(report.flagged).toEqual([padding.id]);
    expect(report.passing.sort()).toEqual([...honest.map((o) => o.id), plain.id].sort());

    // Every probe asked for reasoning at the probes' effort, max_tokens its visible cap plus that effort's budget.
    const budget = defaultReasoningBudget(PROBE_REASONING_EFFORT);
    const evidence = (await probeEvidence([padding.id])).get(padding.id)!;
    // The set of a model that bills reasoning has no limit probe (its cap covers the hidden reasoning too).
    expect(evidence.map((e) => `${e.probe}:${e.check}`).sort()).toEqual(["chat:usage", "echo:usage", "json:usage", "tool:usage"]);
    for (const e of evidence) {
      expect(e.got).toMatch(new RegExp(`^usage claim of \\d+ reasoning tokens beyond the bound of ${budget} `));
      expect(e.got).toContain(`effort ${PROBE_REASONING_EFFORT}`);
    }
    expect(await db.offer.findUniqueOrThrow({ where: { id: padding.id } })).toMatchObject({ probeStatus: "flagged", probeDelisted: true });

    // Paid as a buyer would pay: the visible answer the honest offers were paid for, plus the bound, not the claim.
    const runs = await db.probeRun.findMany({ where: { roundId: report.roundId, offerId: { in: [honest[0].id, padding.id] } } });
    for (const probe of ["echo", "chat", "json", "tool"]) {
      const [fair, padded] = [honest[0].id, padding.id].map((id) => runs.find((r) => r.offerId === id && r.probe === probe)!);
      expect(padded.completionTokens, probe).toBe(fair.completionTokens! + budget);
    }
  });

  it("leave an outage to the offer's health: not flagged, not charged, asked once", async () => {
    const model = await probeModel();
    const down = await upstream("error:503");
    const refusing = await upstream("error:404");
    const [outage, refusal] = [await offerOn(model.id, down, 100), await offerOn(model.id, refusing, 100)];
    const report = await runProbeRound({ modelIds: [model.id], budgetMicros: await budgetLeaving(100_000_000n), reference: null });
    expect(down.requestCount()).toBe(1);
    expect(await db.offer.findUniqueOrThrow({ where: { id: outage.id } })).toMatchObject({ probeStatus: "unprobed", probeDelisted: false });
    const runs = await db.probeRun.findMany({ where: { offerId: outage.id } });
    expect(runs.map((r) => [r.status, r.outcome, r.httpStatus, r.chargeMicros])).toEqual([["released", "unanswered", 503, 0n]]);
    // An upstream refusing the requests its offer declares it serves is the supplier's fault.
    expect(report.flagged).toEqual([refusal.id]);
    expect((await probeEvidence([refusal.id])).get(refusal.id)![0]).toMatchObject({
      check: "error",
      got: expect.stringMatching(/^HTTP 404/),
    });
  });

  it("are paid from what the operator funds: one probe_funding entry from external USDC to the platform", async () => {
    const before = await platformFundsAvailable(db);
    const after = await fundPlatformProbes(2_500_000n);
    expect(after).toBe(before + 2_500_000n);
    const entry = await db.journalEntry.findFirstOrThrow({
      where: { kind: "probe_funding" },
      orderBy: { createdAt: "desc" },
      include: { lines: true },
    });
    expect(entry.lines.map((l) => l.amountMicros).sort()).toEqual([-2_500_000n, 2_500_000n]);
  });

  it("send nothing beyond the day's budget, and nothing unpaid", async () => {
    // A small output cap, so that every probe's most expensive answer is about the same, whatever max_tokens it drew.
    const model = await seedPrivateModel({ supportsTools: true, supportsJsonSchema: true, maxOutputTokens: 128 });
    const u = await upstream();
    const offers = [await offerOn(model.id, u, 100), await offerOn(model.id, u, 100)];
    const skippedBefore = await skippedFor("budget");
    // Room for about one probe's most expensive answer.
    const budget = await budgetLeaving(1_000n);
    const report = await runProbeRound({ modelIds: [model.id], budgetMicros: budget, reference: null });
    expect(report.sent).toBeGreaterThanOrEqual(1);
    expect(report.sent).toBeLessThan(10);
    expect(report.skipped.budget).toBe(10 - report.sent);
    expect(await skippedFor("budget")).toBe(skippedBefore + report.skipped.budget);
    expect(u.requestCount()).toBe(report.sent);
    const runs = await db.probeRun.findMany({ where: { roundId: report.roundId } });
    expect(runs).toHaveLength(report.sent);
    expect(runs.every((r) => r.status === "settled" && r.chargeMicros > 0n)).toBe(true);
    expect((await db.probeDay.findUniqueOrThrow({ where: { day: utcDay() } })).committedMicros).toBeLessThanOrEqual(budget);
    // An offer none of whose probes was sent keeps its verdict.
    const statuses = await db.offer.findMany({ where: { id: { in: offers.map((o) => o.id) } } });
    expect(statuses.filter((o) => o.probeStatus === "unprobed").length + report.passing.length).toBe(2);
  });

  it("send nothing the platform's balance cannot pay, and nothing to an offer without the capacity", async () => {
    // A list price so high that one probe's most expensive answer is beyond any platform fee account.
    const model = await seedPrivateModel({ supportsTools: true, supportsJsonSchema: true, outputMicroDiemPerMTok: 10n ** 16n });
    const u = await upstream();
    const offer = await offerOn(model.id, u, 100, 10n ** 14n);
    const report = await runProbeRound({ modelIds: [model.id], budgetMicros: 10n ** 15n, reference: null });
    expect(report.sent).toBe(0);
    expect(report.skipped.balance).toBe(5);
    expect(u.requestCount()).toBe(0);
    expect(await db.probeRun.count({ where: { offerId: offer.id } })).toBe(0);
    expect(await db.offer.findUniqueOrThrow({ where: { id: offer.id } })).toMatchObject({ probeStatus: "unprobed", probeDelisted: false });

    const cheap = await probeModel();
    const tiny = await offerOn(cheap.id, u, 100, 10n);
    const none = await runProbeRound({ modelIds: [cheap.id], budgetMicros: await budgetLeaving(100_000_000n), reference: null });
    expect(none.skipped.capacity).toBe(5);
    expect(u.requestCount()).toBe(0);
    expect(await db.probeRun.count({ where: { offerId: tiny.id } })).toBe(0);
  });

  it("compare every offer with the operator's reference endpoint when one is configured", async () => {
    const model = await probeModel();
    const u = await upstream();
    const offer = await offerOn(model.id, u, 100);
    // The reference serves the marketplace's id, as another model would answer it.
    const reference = await startReferenceUpstream({
      defaultMode: "substitute:qwen3-235b",
      models: [
        {
          id: model.id,
          name: "reference",
          contextTokens: 32_768,
          maxOutputTokens: 4096,
          inputUsdPerMTok: "0.70",
          outputUsdPerMTok: "2.80",
          supportsFunctionCalling: true,
          supportsResponseSchema: true,
          supportsVision: false,
        },
      ],
    });
    upstreams.push(reference);
    const report = await runProbeRound({
      modelIds: [model.id],
      budgetMicros: await budgetLeaving(100_000_000n),
      reference: { baseUrl: reference.url, apiKey: reference.apiKey },
    });
    expect(report.flagged).toEqual([offer.id]);
    const evidence = (await probeEvidence([offer.id])).get(offer.id)!;
    // The reference is asked the probes sent at temperature 0 (the echo always; json and tool when they drew it: their
    // schema-shaped answers are the same from the other model, so only the echo must differ).
    expect(reference.requestCount()).toBeGreaterThanOrEqual(1);
    expect(new Set(evidence.map((e) => e.check))).toEqual(new Set(["reference"]));
    expect(evidence.find((e) => e.probe === "echo")!.expected).toMatch(/standing in for qwen3-235b/);
  });

  it("never pay above the model's going price: an offer priced above it is probed at it, and a sliver at 1 cent does not drag it", async () => {
    const model = await probeModel();
    const cheap = await offerOn(model.id, await upstream(), 40);
    const mid = await offerOn(model.id, await upstream(), 60);
    const dear = await offerOn(model.id, await upstream(), 10_000);
    // Too little capacity to take a probe, but on the book: the best price is 1 cent, the going price is not.
    const sliver = await offerOn(model.id, await upstream(), 1, 10n);
    expect((await getBook(model.id, new Date())).best_price_cents).toBe(1);
    // Alone on its model's book at 10,000 cents: a price no buyer without a max of its own pays.
    const lonelyModel = await probeModel();
    const lonely = await offerOn(lonelyModel.id, await upstream(), 10_000);

    const report = await runProbeRound({
      modelIds: [model.id, lonelyModel.id],
      budgetMicros: await budgetLeaving(100_000_000n),
      reference: null,
    });
    expect(report.passing.sort()).toEqual([cheap.id, mid.id, dear.id, lonely.id].sort());
    expect(report.skipped.capacity).toBe(5);
    const runs = await db.probeRun.findMany({ where: { roundId: report.roundId } });
    expect(runs).toHaveLength(4 * 5);
    expect(runs.some((r) => r.offerId === sliver.id)).toBe(false);
    // Half of the model's diem on the book is available at 60 cents or less: its going price.
    const going = new Map([
      [model.id, 60],
      [lonelyModel.id, env.DEFAULT_MAX_PRICE_CENTS],
    ]);
    const paid = new Map([
      [cheap.id, 40],
      [mid.id, 60],
      [dear.id, 60],
      [lonely.id, env.DEFAULT_MAX_PRICE_CENTS],
    ]);
    for (const run of runs) {
      expect(run.goingPriceCents).toBe(going.get(run.modelId));
      expect(run.priceCents).toBeLessThanOrEqual(run.goingPriceCents!);
      expect(run.priceCents).toBe(paid.get(run.offerId));
      const burn = burnMicroDiem(run.promptTokens!, run.completionTokens!, {
        inputMicroDiemPerMTok: model.inputMicroDiemPerMTok,
        outputMicroDiemPerMTok: model.outputMicroDiemPerMTok,
      });
      expect(run.chargeMicros).toBe(chargeMicros(burn, paid.get(run.offerId)!));
    }
    // The supplier priced above the going price earned the going price's share, and what it earned is in the ledger.
    for (const offer of [dear, lonely]) {
      const own = runs.filter((r) => r.offerId === offer.id);
      const shares = own.reduce((s, r) => s + splitCharge(r.chargeMicros, env.PLATFORM_FEE_BPS).supplierMicros, 0n);
      const earnings = await db.ledgerAccount.findUniqueOrThrow({
        where: { kind_ownerId: { kind: "supplier", ownerId: offer.supplierId } },
      });
      expect(earnings.balanceMicros).toBe(shares);
    }
  });

  // Nine rounds: on a loaded two-core machine more than the default 30 s.
  it(
    "re-probe a flagged offer on a doubling backoff, not every round, and relist it when a due round passes it",
    { timeout: 90_000 },
    async () => {
      const saved = { base: env.PROBE_FLAGGED_BACKOFF_MS, max: env.PROBE_FLAGGED_BACKOFF_MAX_MS };
      env.PROBE_FLAGGED_BACKOFF_MS = 60_000;
      env.PROBE_FLAGGED_BACKOFF_MAX_MS = 150_000;
      try {
        const model = await probeModel();
        const honest = await offerOn(model.id, await upstream(), 100);
        const substituting = await upstream("substitute:qwen3-235b");
        const sub = await offerOn(model.id, substituting, 100);
        const t0 = Date.now();
        const round = async (atMs: number) =>
          runProbeRound({
            modelIds: [model.id],
            budgetMicros: await budgetLeaving(100_000_000n),
            reference: null,
            now: () => new Date(t0 + atMs),
          });
        const earned = async () =>
          (await db.ledgerAccount.findUnique({ where: { kind_ownerId: { kind: "supplier", ownerId: sub.supplierId } } }))?.balanceMicros ??
          0n;
        const state = async () => db.offer.findUniqueOrThrow({ where: { id: sub.id } });

        const first = await round(0);
        expect(first.flagged).toEqual([sub.id]);
        expect(substituting.requestCount()).toBe(5);
        const paidOnce = await earned();
        expect(paidOnce).toBeGreaterThan(0n);
        expect(await state()).toMatchObject({ probeFlagStreak: 1, probeDueAt: new Date(t0 + 60_000), probeDelisted: true });

        // The rounds before its backoff has passed buy nothing from it; the honest offer is probed as usual.
        for (const at of [1_000, 59_000]) {
          const r = await round(at);
          expect(r.backingOff).toBe(1);
          expect(r.passing).toEqual([honest.id]);
          expect(r.flagged).toEqual([]);
        }
        expect(substituting.requestCount()).toBe(5);
        expect(await earned()).toBe(paidOnce);
        expect(await db.probeRun.count({ where: { offerId: sub.id } })).toBe(5);

        // Due: probed (and paid) again, still substituting: the wait doubles, then stops at the max.
        expect((await round(60_000)).flagged).toEqual([sub.id]);
        expect(substituting.requestCount()).toBe(10);
        expect(await state()).toMatchObject({ probeFlagStreak: 2, probeDueAt: new Date(t0 + 60_000 + 120_000) });
        expect((await round(179_000)).backingOff).toBe(1);
        expect(substituting.requestCount()).toBe(10);
        expect((await round(180_000)).flagged).toEqual([sub.id]);
        expect(await state()).toMatchObject({ probeFlagStreak: 3, probeDueAt: new Date(t0 + 180_000 + 150_000) });
        expect(substituting.requestCount()).toBe(15);

        // The supplier fixes its server behind the same offer (no edit): the first due round passes it and relists it.
        const fixed = await upstream();
        await db.offer.update({ where: { id: sub.id }, data: { upstreamBaseUrl: fixed.url } });
        expect((await round(329_000)).backingOff).toBe(1);
        expect(fixed.requestCount()).toBe(0);
        const due = await round(330_000);
        expect(due.passing.sort()).toEqual([honest.id, sub.id].sort());
        expect(fixed.requestCount()).toBe(5);
        expect(await state()).toMatchObject({ probeStatus: "passing", probeDelisted: false, probeFlagStreak: 0, probeDueAt: null });
        expect((await round(331_000)).passing.sort()).toEqual([honest.id, sub.id].sort());
      } finally {
        env.PROBE_FLAGGED_BACKOFF_MS = saved.base;
        env.PROBE_FLAGGED_BACKOFF_MAX_MS = saved.max;
      }
    },
  );
});

describe("probation: every new or changed offer is checked before it serves", () => {
  const saved = { probation: env.PROBE_PROBATION };
  beforeAll(() => {
    env.PROBE_PROBATION = true;
  });
  afterAll(() => {
    env.PROBE_PROBATION = saved.probation;
  });

  async function postOfferAs(cookie: string, u: { url: string; apiKey: string }, modelId: string, priceCents: number) {
    const res = await postOffer(
      jsonRequest(
        "POST",
        "/v1/supply/offers",
        {
          upstream_base_url: u.url,
          upstream_api_key: u.apiKey,
          models: [{ id: modelId, upstream_model: UPSTREAM_MODEL }],
          price_cents: priceCents,
          daily_capacity: "5",
        },
        { cookie },
      ),
    );
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; on_book: boolean; probe: { status: string } };
  }

  const ask = (key: string, modelId: string) => callCompletions(key, { model: modelId, messages: [{ role: "user", content: "hello" }] });

  it("a new substituting offer never serves a buyer: off the book while verifying, then flagged and kept off", async () => {
    const model = await probeModel();
    await offerOn(model.id, await upstream(), 90);
    const substituting = await upstream("substitute:qwen3-235b");
    const supplier = await seedSignedInAccount();
    const buyer = await seedBuyer(10_000_000n);
    const delist = env.PROBE_DELIST_FLAGGED;
    env.PROBE_DELIST_FLAGGED = false;
    try {
      // The cheapest offer, posted: without probation every request below would go to it.
      const posted = await postOfferAs(supplier.cookie, substituting, model.id, 50);
      expect(posted.probe.status).toBe("verifying");
      expect(posted.on_book).toBe(false);
      for (let i = 0; i < 3; i++) {
        const res = await ask(buyer.key, model.id);
        expect(res.status).toBe(200);
        expect(res.headers.get("x-svc-price-cents")).toBe("90");
      }
      // Its probe set was started by the post (this waits for that run; it does not start another).
      await startProbation(posted.id);
      // Flagged by its first set, and off the book although the operator keeps flagged offers listed: it never served.
      expect(await db.offer.findUniqueOrThrow({ where: { id: posted.id } })).toMatchObject({ probeStatus: "flagged", probeDelisted: true });
      const res = await ask(buyer.key, model.id);
      expect(res.headers.get("x-svc-price-cents")).toBe("90");
      // Every request it ever got was a probe.
      expect(substituting.requestCount()).toBe(await db.probeRun.count({ where: { offerId: posted.id } }));
      expect(substituting.requestCount()).toBeGreaterThan(0);
    } finally {
      env.PROBE_DELIST_FLAGGED = delist;
    }
  });

  it("a fresh offer becomes routable once its probe set passes, within seconds; a new upstream puts it back in probation", async () => {
    const model = await probeModel();
    const supplier = await seedSignedInAccount();
    const buyer = await seedBuyer(10_000_000n);
    const started = Date.now();
    const posted = await postOfferAs(supplier.cookie, await upstream(), model.id, 50);
    expect(posted.probe.status).toBe("verifying");
    expect((await getBook(model.id, new Date())).offers).toBe(0);
    expect((await ask(buyer.key, model.id)).status).toBe(503);

    const state = () => db.offer.findUniqueOrThrow({ where: { id: posted.id } });
    while ((await state()).probeStatus === "verifying" && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 50));
    expect(await state()).toMatchObject({ probeStatus: "passing", probeDelisted: false });
    expect(Date.now() - started).toBeLessThan(10_000);
    const served = await ask(buyer.key, model.id);
    expect(served.status).toBe(200);
    expect(served.headers.get("x-svc-price-cents")).toBe("50");

    // The supplier points it at another server: probation again, off the book until that one passes.
    const substituting = await upstream("substitute:qwen3-235b");
    const patchedAt = new Date();
    const patched = await patchOffer(
      jsonRequest(
        "PATCH",
        `/v1/supply/offers/${posted.id}`,
        { upstream_base_url: substituting.url, upstream_api_key: substituting.apiKey },
        { cookie: supplier.cookie },
      ),
      routeParams({ id: posted.id }),
    );
    expect(patched.status).toBe(200);
    expect(((await patched.json()) as { probe: { status: string } }).probe.status).toBe("verifying");
    expect((await ask(buyer.key, model.id)).status).toBe(503);
    await startProbation(posted.id);
    expect(await state()).toMatchObject({ probeStatus: "flagged", probeDelisted: true });
    // Every request the new server got was one of its probes.
    expect(substituting.requestCount()).toBe(await db.probeRun.count({ where: { offerId: posted.id, createdAt: { gte: patchedAt } } }));
  });

  it("serves as unverified when probes cannot run for it (no budget today), and says so", async () => {
    const model = await probeModel();
    const supplier = await seedSignedInAccount();
    const budget = env.PROBE_DAILY_BUDGET_MICROS;
    env.PROBE_DAILY_BUDGET_MICROS = 0;
    try {
      const posted = await postOfferAs(supplier.cookie, await upstream(), model.id, 50);
      expect(posted.probe.status).toBe("unverified");
      expect(posted.on_book).toBe(true);
      const buyer = await seedBuyer(10_000_000n);
      expect((await ask(buyer.key, model.id)).status).toBe(200);
    } finally {
      env.PROBE_DAILY_BUDGET_MICROS = budget;
    }
  });
});
