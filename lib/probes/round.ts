import "server-only";
import { randomInt, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { randomHexId } from "@/lib/auth/tokens";
import { db, Prisma } from "@/lib/db/client";
import { env } from "@/lib/env";
import { log } from "@/lib/log";
import { burnMicroDiem, chargeMicros } from "@/lib/money";
import { getGoingPrices } from "@/lib/market/going-price";
import { nextProbeDueAt } from "@/lib/probes/backoff";
import { generateProbeSet, probeRequest, probesFor, type ProbeDefinition, type ProbeRequest } from "@/lib/probes/catalog";
import { failure, judgeAnswer, judgeHttpFailure, judgeUsage, bounded } from "@/lib/probes/judge";
import type { ProbeFailure } from "@/lib/supply/probe-evidence";
import { releaseProbe, reserveProbe, settleProbe, sweepStaleProbes, type ProbeRecord } from "@/lib/probes/payment";
import { metrics } from "@/lib/ops/metrics";
import { recordProbeForward } from "@/lib/market/quality/measurements";
import { newRequestContext, runInRequestContext } from "@/lib/ops/request-context";
import { allowedClaim, billingRules, billUsage, outputCap, PromptMeter } from "@/lib/upstream/metering";
import { parseUpstreamAnswer } from "@/lib/upstream/answer";
import { upstreamKey } from "@/lib/upstream/key-cache";
import { utcDay } from "@/lib/supply/capacity";
import { DEFAULT_MAX_RESPONSE_BYTES, postChatCompletion, UpstreamError } from "@/lib/upstream/client";

/**
 * A probe round: every live offer (active, healthy, with capacity left today, on the book or delisted by a probe) of
 * the models it covers gets the round's probe set of its model (lib/probes/catalog.ts: generated afresh for each round
 * and model, shaped like buyers' requests), each sent after a random wait (up to PROBE_SPREAD_MS: not a burst), under a
 * request id of the router's form (X-Request-Id, as every forward sends), by the platform straight to the offer's
 * upstream (its key decrypted as the router does, the router's timeout, response-size limit and SSRF rules), bought
 * at the offer's price but never above the model's going price (lib/market/going-price.ts: an offer priced above it
 * is probed at the going price, and its supplier earns that price's share), paid through the ledger
 * (lib/probes/payment.ts). Each answer is judged by itself (judge.ts), then against the
 * other offers of the model (consensus) and the operator's reference endpoint when configured (reference). An offer
 * that fails any check is flagged with the evidence and, when PROBE_DELIST_FLAGGED is on, delisted; one whose answers
 * all pass is passing (and back on the book); one that answered nothing keeps its verdict (outages are health's).
 * A flagged offer is not probed again until its backoff has passed (lib/probes/backoff.ts), not every round.
 *
 * Bounded: at most PROBE_MAX_OFFERS_PER_ROUND offers (whole models, least recently probed first, so consecutive
 * rounds cover the market), five probes per offer and model, PROBE_CONCURRENCY offers at a time, one outage per offer
 * (then it is skipped for the round), and the day's budget. A stranger can make it send nothing: only suppliers post
 * offers, and the probes are generated from svc's own secret and vocabulary.
 *
 * An offer in probation ("verifying", lib/probes/probation.ts) is off the book until a round passes it: one that fails
 * stays off it (flagged) whatever PROBE_DELIST_FLAGGED says.
 */

const PROBE_CONCURRENCY = 4;
/** The rounds of each offer whose evidence is kept (and always the one that flagged it). */
export const PROBE_KEEP_ROUNDS = 20;

export type ProbeRoundOptions = {
  now?: () => Date;
  /** Only these models (default: all). */
  modelIds?: string[];
  /** Only these offers (a probation run: due whatever their backoff says). */
  offerIds?: string[];
  /** The most a probe waits, at random, before it is sent (default PROBE_SPREAD_MS). */
  spreadMs?: number;
  budgetMicros?: bigint;
  delistFlagged?: boolean;
  maxOffers?: number;
  /** The reference endpoint (default: PROBE_REFERENCE_BASE_URL and _API_KEY; null: none). */
  reference?: { baseUrl: string; apiKey: string } | null;
};

export type ProbeRoundReport = {
  roundId: string;
  offers: number;
  sent: number;
  skipped: { budget: number; balance: number; capacity: number };
  /** Flagged offers left out of this round: their backoff has not passed. */
  backingOff: number;
  flagged: string[];
  passing: string[];
  chargedMicros: bigint;
};

type Target = {
  offerId: string;
  probeStatus: string;
  supplierId: string;
  baseUrl: string;
  keyCiphertext: string;
  offerPriceCents: number;
  probedAt: Date | null;
  probeFlagStreak: number;
  modelId: string;
  upstreamModel: string;
  supportsTools: boolean;
  supportsJsonSchema: boolean;
  inputMicroDiemPerMTok: bigint;
  outputMicroDiemPerMTok: bigint;
  contextTokens: number;
  maxOutputTokens: number;
  billsReasoning: boolean;
  /** What the probe pays: the offer's price, at most the model's going price. */
  priceCents: number;
  goingPriceCents: number;
};

type Result = {
  target: Target;
  probe: ProbeDefinition;
  runId: string;
  record: ProbeRecord;
};

export async function runProbeRound(options: ProbeRoundOptions = {}): Promise<ProbeRoundReport> {
  const now = options.now ?? (() => new Date());
  const started = now();
  const roundId = randomUUID();
  const budgetMicros = options.budgetMicros ?? BigInt(env.PROBE_DAILY_BUDGET_MICROS);
  const delist = options.delistFlagged ?? env.PROBE_DELIST_FLAGGED;
  const reference =
    options.reference !== undefined
      ? options.reference
      : env.PROBE_REFERENCE_BASE_URL && env.PROBE_REFERENCE_API_KEY
        ? { baseUrl: env.PROBE_REFERENCE_BASE_URL, apiKey: env.PROBE_REFERENCE_API_KEY }
        : null;
  const report: ProbeRoundReport = {
    roundId,
    offers: 0,
    sent: 0,
    skipped: { budget: 0, balance: 0, capacity: 0 },
    backingOff: 0,
    flagged: [],
    passing: [],
    chargedMicros: 0n,
  };

  const swept = await sweepStaleProbes(started);
  if (swept > 0) log.warn("probe reservations released unpaid after a crash", { swept });

  const live = await liveTargets(started, options.modelIds, options.offerIds);
  const isDue = (t: LiveTarget) => options.offerIds !== undefined || t.probeDueAt === null || t.probeDueAt <= started;
  report.backingOff = new Set(live.filter((t) => !isDue(t)).map((t) => t.offerId)).size;
  const chosen = selectRound(live.filter(isDue), options.maxOffers ?? env.PROBE_MAX_OFFERS_PER_ROUND);
  report.offers = new Set(chosen.map((t) => t.offerId)).size;
  if (chosen.length === 0) return report;
  const going = await getGoingPrices(
    chosen.map((t) => t.modelId),
    started,
  );
  const targets: Target[] = chosen.map((t) => {
    const goingPriceCents = going.get(t.modelId)!;
    return { ...t, goingPriceCents, priceCents: Math.min(t.offerPriceCents, goingPriceCents) };
  });

  const day = utcDay(started);
  const spreadMs = options.spreadMs ?? env.PROBE_SPREAD_MS;
  const sets = new Map<string, ProbeDefinition[]>();
  for (const t of targets) if (!sets.has(t.modelId)) sets.set(t.modelId, generateProbeSet(`${roundId}\n${t.modelId}`, t));
  const results: Result[] = [];
  // One offer's models one after another (one request at a time per upstream); offers PROBE_CONCURRENCY at a time.
  const byOffer = new Map<string, Target[]>();
  for (const t of targets) byOffer.set(t.offerId, [...(byOffer.get(t.offerId) ?? []), t]);
  await eachLimited([...byOffer.values()], PROBE_CONCURRENCY, async (offerTargets) => {
    // An upstream that does not answer (an outage) is not asked again this round: a dead one costs one timeout, not five.
    offer: for (const target of offerTargets) {
      for (const probe of probesFor(sets.get(target.modelId)!, target)) {
        if (spreadMs > 0) await sleep(randomInt(0, spreadMs + 1));
        const result = await sendProbe(roundId, target, probe, day, budgetMicros, report);
        if (result) results.push(result);
        if (result?.record.outcome === "unanswered") break offer;
      }
    }
  });

  const referenceAnswers = reference ? await askReference(reference, targets, sets) : new Map<string, string>();
  await compareAnswers(results, referenceAnswers);
  await recordVerdicts(results, delist, now(), report);
  await pruneEvidence([...new Set(targets.map((t) => t.offerId))]);
  const unpaid = report.skipped.budget + report.skipped.balance;
  (unpaid > 0 ? log.warn : log.info)(
    unpaid > 0 ? "probe round finished, some probes not sent (budget or platform balance)" : "probe round finished",
    {
      roundId,
      offers: report.offers,
      sent: report.sent,
      skipped: report.skipped,
      backing_off: report.backingOff,
      flagged: report.flagged.length,
      charged_micros: report.chargedMicros,
    },
  );
  return report;
}

type LiveTarget = Omit<Target, "priceCents" | "goingPriceCents"> & { probeDueAt: Date | null };

async function liveTargets(now: Date, modelIds: string[] | undefined, offerIds: string[] | undefined): Promise<LiveTarget[]> {
  const rows = await db.$queryRaw<
    {
      offer_id: string;
      probe_status: string;
      supplier_id: string;
      upstream_base_url: string;
      upstream_key_ciphertext: string;
      price_cents: number;
      probed_at: Date | null;
      probe_flag_streak: number;
      probe_due_at: Date | null;
      model_id: string;
      upstream_model: string;
      supports_tools: boolean;
      supports_json_schema: boolean;
      input_micro_diem_per_mtok: bigint;
      output_micro_diem_per_mtok: bigint;
      context_tokens: number;
      max_output_tokens: number;
      offer_max_output_tokens: number | null;
      bills_reasoning: boolean;
    }[]
  >`
    SELECT o.id::text AS offer_id, o.probe_status::text, o.supplier_id::text, o.upstream_base_url, o.upstream_key_ciphertext, o.price_cents,
           o.probed_at, o.probe_flag_streak, o.probe_due_at, om.model_id, om.upstream_model, om.supports_tools, om.supports_json_schema,
           m.input_micro_diem_per_mtok, m.output_micro_diem_per_mtok, m.context_tokens, m.max_output_tokens,
           o.max_output_tokens AS offer_max_output_tokens, m.bills_reasoning
    FROM offers o
    JOIN offer_models om ON om.offer_id = o.id
    JOIN models m ON m.id = om.model_id
    LEFT JOIN offer_days d ON d.offer_id = o.id AND d.day = ${utcDay(now)}::date
    WHERE o.status = 'active'
      AND svc_offer_on_book(o.status, o.unhealthy_until, false, o.daily_capacity_micro_diem, d.burned_micro_diem,
                            d.held_micro_diem, ${now}::timestamptz)
      ${modelIds ? Prisma.sql`AND om.model_id IN (${Prisma.join(modelIds.length ? modelIds : [""])})` : Prisma.empty}
      ${offerIds ? Prisma.sql`AND o.id::text IN (${Prisma.join(offerIds.length ? offerIds : [""])})` : Prisma.empty}
    ORDER BY o.probed_at NULLS FIRST, o.created_at, o.id`;
  return rows.map((r) => ({
    offerId: r.offer_id,
    probeStatus: r.probe_status,
    supplierId: r.supplier_id,
    baseUrl: r.upstream_base_url,
    keyCiphertext: r.upstream_key_ciphertext,
    offerPriceCents: r.price_cents,
    probedAt: r.probed_at,
    probeFlagStreak: r.probe_flag_streak,
    probeDueAt: r.probe_due_at,
    modelId: r.model_id,
    upstreamModel: r.upstream_model,
    supportsTools: r.supports_tools,
    supportsJsonSchema: r.supports_json_schema,
    inputMicroDiemPerMTok: BigInt(r.input_micro_diem_per_mtok),
    outputMicroDiemPerMTok: BigInt(r.output_micro_diem_per_mtok),
    contextTokens: r.context_tokens,
    maxOutputTokens: Math.min(r.max_output_tokens, r.offer_max_output_tokens ?? r.max_output_tokens),
    billsReasoning: r.bills_reasoning,
  }));
}

/** Whole models (the consensus needs every offer of one), least recently probed first, up to maxOffers offers. */
function selectRound<T extends LiveTarget>(targets: T[], maxOffers: number): T[] {
  const byModel = new Map<string, T[]>();
  for (const t of targets) byModel.set(t.modelId, [...(byModel.get(t.modelId) ?? []), t]);
  const offers = new Set<string>();
  const chosen: T[] = [];
  for (const group of byModel.values()) {
    const fresh = new Set(group.map((t) => t.offerId).filter((id) => !offers.has(id)));
    if (offers.size + fresh.size > maxOffers) {
      if (offers.size > 0) continue;
      // A model with more offers than a round takes: its least recently probed ones.
      const some = group.slice(0, maxOffers);
      return some;
    }
    for (const id of fresh) offers.add(id);
    chosen.push(...group);
  }
  return chosen;
}

async function eachLimited<T>(items: T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const workers = Array.from({ length: Math.min(limit, queue.length) }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await run(item);
  });
  await Promise.all(workers);
}

const UNANSWERED = { outcome: "unanswered" as const, failures: [], answer: null, returnedModel: null, finishReason: null };

async function sendProbe(
  roundId: string,
  target: Target,
  probe: ProbeDefinition,
  day: Date,
  budgetMicros: bigint,
  report: ProbeRoundReport,
): Promise<Result | null> {
  const request = probeRequest(probe, target.upstreamModel, target);
  // The visible cap plus, on a reasoning model, the effort's reasoning budget: what a buyer's request like it forwards.
  const rules = billingRules(request, target);
  const maxOutput = outputCap(target, rules);
  request.max_tokens = maxOutput;
  const meter = new PromptMeter(request, target.contextTokens);
  const promptTokens = await meter.count();
  const prices = { inputMicroDiemPerMTok: target.inputMicroDiemPerMTok, outputMicroDiemPerMTok: target.outputMicroDiemPerMTok };
  const maxBurnMicroDiem = burnMicroDiem(allowedClaim(promptTokens), maxOutput, prices);
  const reserved = await reserveProbe({
    roundId,
    offerId: target.offerId,
    modelId: target.modelId,
    probe: probe.name,
    day,
    budgetMicros,
    priceCents: target.priceCents,
    goingPriceCents: target.goingPriceCents,
    ...prices,
    maxBurnMicroDiem,
    maxChargeMicros: chargeMicros(maxBurnMicroDiem, target.priceCents),
  });
  if (!reserved.ok) {
    report.skipped[reserved.reason]++;
    metrics.probesSkipped.inc({ reason: reserved.reason });
    // Counted, and said once in the round's summary (a platform without fees would otherwise log every probe).
    log.debug("probe not sent", { offer: target.offerId, model: target.modelId, probe: probe.name, reason: reserved.reason });
    return null;
  }
  report.sent++;
  const runId = reserved.runId;

  // Under a request id of the router's form, as a buyer's forward is (lib/upstream/client.ts forwardHeaders).
  const context = { ...newRequestContext(), requestId: `req_${randomHexId(12)}`, offerId: target.offerId };
  const sentAt = performance.now();
  const outcome = await runInRequestContext(context, () => callUpstream(target.baseUrl, upstreamKey(target.keyCiphertext), request));
  const latencyMs = performance.now() - sentAt;
  if (outcome.kind !== "answer") {
    await recordProbeForward(target.offerId, null);
    const record: ProbeRecord =
      outcome.kind === "outage"
        ? { ...UNANSWERED, httpStatus: outcome.status }
        : { ...UNANSWERED, outcome: "failed", failures: [outcome.failure], httpStatus: outcome.status };
    await releaseProbe(runId, record);
    return { target, probe, runId, record };
  }

  const judged = judgeAnswer(probe, target.upstreamModel, outcome.model, outcome.answer);
  const billed = await billUsage(meter, outcome.answer, maxOutput, rules);
  const overClaim = judgeUsage(billed);
  const verdict = overClaim ? { ...judged, failures: [...judged.failures, overClaim] } : judged;
  const record: ProbeRecord = {
    outcome: verdict.failures.length > 0 ? "failed" : "passed",
    failures: verdict.failures,
    answer: verdict.answer,
    returnedModel: bounded(outcome.model),
    finishReason: outcome.answer.finishReason,
    httpStatus: 200,
  };
  // Measured with buyers' forwards (#37): the supplier cannot tell a probe from a buyer, so its answer is a fair sample.
  await recordProbeForward(target.offerId, { latencyMs, completionTokens: billed.completionTokens });
  const settled = await settleProbe(runId, billed, record);
  if (settled) {
    report.chargedMicros += settled.chargeMicros;
    metrics.probeChargedMicros.inc(Number(settled.chargeMicros));
  } else {
    log.warn("probe answered after its reservation was swept: not paid", { offer: target.offerId, run: runId });
  }
  return { target, probe, runId, record };
}

type UpstreamOutcome =
  | { kind: "answer"; answer: NonNullable<ReturnType<typeof parseUpstreamAnswer>>; model: string | null }
  | { kind: "outage"; status: number | null }
  | { kind: "failed"; failure: ProbeFailure; status: number | null };

async function callUpstream(baseUrl: string, apiKey: string, request: ProbeRequest): Promise<UpstreamOutcome> {
  try {
    const res = await postChatCompletion({
      baseUrl,
      apiKey,
      body: request,
      timeoutMs: env.UPSTREAM_TIMEOUT_MS,
      maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
    });
    const answer = res.status === 200 ? parseUpstreamAnswer(res.json) : null;
    if (answer) {
      const model = (res.json as { model?: unknown }).model;
      return { kind: "answer", answer, model: typeof model === "string" ? model : null };
    }
    const failed = judgeHttpFailure(res.status, res.rawText);
    return failed ? { kind: "failed", failure: failed, status: res.status } : { kind: "outage", status: res.status };
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    // An answer far beyond what a short probe needs is the upstream's; no answer at all is an outage.
    if (error.kind === "too_large") return { kind: "failed", failure: failure("error", "a short answer", error.message), status: 200 };
    return { kind: "outage", status: null };
  }
}

/** The reference's answer to each probe of each model (keyed model + probe); nothing when it fails (logged). */
async function askReference(
  reference: { baseUrl: string; apiKey: string },
  targets: Target[],
  sets: Map<string, ProbeDefinition[]>,
): Promise<Map<string, string>> {
  const answers = new Map<string, string>();
  const wanted = new Map<string, ProbeDefinition>();
  for (const t of targets) for (const p of probesFor(sets.get(t.modelId)!, t)) if (p.compare) wanted.set(`${t.modelId}\n${p.name}`, p);
  for (const [key, probe] of wanted) {
    const modelId = key.split("\n")[0];
    const context = { ...newRequestContext(), requestId: `req_${randomHexId(12)}` };
    const outcome = await runInRequestContext(context, () =>
      callUpstream(reference.baseUrl, reference.apiKey, probeRequest(probe, modelId)),
    );
    const verdict = outcome.kind === "answer" ? judgeAnswer(probe, modelId, modelId, outcome.answer) : null;
    if (verdict?.answer != null && verdict.failures.length === 0) answers.set(key, verdict.answer);
    else log.warn("the probe reference did not answer usably", { model: modelId, probe: probe.name, outcome: outcome.kind });
  }
  return answers;
}

/**
 * Consensus: an answer that differs from the one a strict majority of the other offers of the model gave to the same
 * probe in this round, at least two of them (offers that gave no comparable answer do not count). Reference: an answer
 * that differs from the reference's. Either adds a failure to the run's stored record.
 */
async function compareAnswers(results: Result[], reference: Map<string, string>): Promise<void> {
  const groups = new Map<string, Result[]>();
  for (const r of results) {
    if (r.record.answer === null || !r.probe.compare) continue;
    const key = `${r.target.modelId}\n${r.probe.name}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [key, group] of groups) {
    for (const r of group) {
      const added: ProbeFailure[] = [];
      const others = group.filter((o) => o.target.offerId !== r.target.offerId).map((o) => o.record.answer!);
      const counts = new Map<string, number>();
      for (const a of others) counts.set(a, (counts.get(a) ?? 0) + 1);
      const [top, n] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0] ?? ["", 0];
      if (n >= 2 && n * 2 > others.length && r.record.answer !== top) {
        added.push(failure("consensus", `${n} of ${others.length} other offers: ${top}`, r.record.answer));
      }
      const ref = reference.get(key);
      if (ref !== undefined && r.record.answer !== ref) added.push(failure("reference", ref, r.record.answer));
      if (added.length === 0) continue;
      r.record = { ...r.record, outcome: "failed", failures: [...r.record.failures, ...added] };
      await db.$executeRaw`
        UPDATE probe_runs SET outcome = 'failed', failures = ${JSON.stringify(r.record.failures)}::jsonb WHERE id = ${r.runId}::uuid`;
    }
  }
  for (const r of results) metrics.probes.inc({ outcome: r.record.outcome });
}

async function recordVerdicts(results: Result[], delist: boolean, at: Date, report: ProbeRoundReport): Promise<void> {
  const byOffer = new Map<string, Result[]>();
  for (const r of results) byOffer.set(r.target.offerId, [...(byOffer.get(r.target.offerId) ?? []), r]);
  for (const [offerId, runs] of byOffer) {
    const failed = runs.filter((r) => r.record.outcome === "failed");
    const passed = runs.filter((r) => r.record.outcome === "passed");
    if (failed.length > 0) {
      const checks = [...new Set(failed.flatMap((r) => r.record.failures.map((f) => f.check)))].join(", ");
      const probes = [...new Set(failed.map((r) => r.probe.name))].join(", ");
      const reason = `Failed ${failed.length} of ${failed.length + passed.length} probes answered (${probes}): ${checks}.`;
      // An offer in probation never served: it stays off the book.
      const delisted = delist || runs[0].target.probeStatus === "verifying";
      await db.offer.update({
        where: { id: offerId },
        data: {
          probeStatus: "flagged",
          probeDelisted: delisted,
          probedAt: at,
          probeFlaggedAt: at,
          probeFlagReason: reason,
          probeFlagStreak: runs[0].target.probeFlagStreak + 1,
          probeDueAt: nextProbeDueAt(at, runs[0].target.probeFlagStreak),
        },
      });
      report.flagged.push(offerId);
      log.warn("offer flagged by fidelity probes", { offer: offerId, reason, delisted });
    } else if (passed.length > 0) {
      await db.offer.update({
        where: { id: offerId },
        data: {
          probeStatus: "passing",
          probeDelisted: false,
          probedAt: at,
          probeFlaggedAt: null,
          probeFlagReason: null,
          probeFlagStreak: 0,
          probeDueAt: null,
        },
      });
      report.passing.push(offerId);
    }
  }
}

/**
 * Keeps the evidence of each offer's last PROBE_KEEP_ROUNDS rounds and of the round that flagged it; older runs that
 * moved no money go, older paid ones keep their money columns (the ledger's record of the probe) and lose the rest.
 */
async function pruneEvidence(offerIds: string[]): Promise<void> {
  const old = Prisma.sql`
    WITH rounds AS (
      SELECT offer_id, round_id, bool_or(outcome = 'failed') AS failed,
             rank() OVER (PARTITION BY offer_id ORDER BY min(created_at) DESC, round_id) AS rnk
      FROM probe_runs WHERE offer_id IN (${Prisma.join(offerIds.map((id) => Prisma.sql`${id}::uuid`))})
      GROUP BY offer_id, round_id
    ), flagging AS (
      SELECT DISTINCT ON (offer_id) offer_id, round_id FROM rounds WHERE failed ORDER BY offer_id, rnk
    )
    SELECT r.offer_id, r.round_id FROM rounds r
    WHERE r.rnk > ${PROBE_KEEP_ROUNDS} AND NOT EXISTS (SELECT 1 FROM flagging f WHERE f.offer_id = r.offer_id AND f.round_id = r.round_id)`;
  await db.$executeRaw`
    DELETE FROM probe_runs p USING (${old}) o
    WHERE p.offer_id = o.offer_id AND p.round_id = o.round_id AND p.status <> 'reserved'
      AND NOT EXISTS (SELECT 1 FROM journal_entries je WHERE je.probe_run_id = p.id)`;
  await db.$executeRaw`
    UPDATE probe_runs p SET failures = NULL, answer = NULL, returned_model = NULL
    FROM (${old}) o
    WHERE p.offer_id = o.offer_id AND p.round_id = o.round_id AND p.status <> 'reserved' AND p.answer IS NOT NULL`;
}
