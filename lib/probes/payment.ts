import "server-only";
import { db, type Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import {
  holdPlatformFunds,
  meterProbeCharge,
  payProbe,
  releasePlatformHold,
  type ProbeCharge,
  type ProbeTerms,
} from "@/lib/ledger/probe-payments";
import type { ProbeFailure } from "@/lib/supply/probe-evidence";

/**
 * Paying for a probe as a buyer pays for a request: reserved before it is sent, settled from the answer. The money
 * moves are the ledger's (lib/ledger/probe-payments.ts); this file keeps the probe's own books around them.
 *
 * Reserve (one transaction): the day's budget is raised by the probe's most expensive answer with one conditional
 * upsert (probe_days: never beyond PROBE_DAILY_BUDGET_MICROS), and that amount is held on a platform fee account
 * (holdPlatformFunds). Either refusal rolls both back and the probe is not sent: never a probe unpaid, never a
 * negative balance. An offer without that burn left today is not probed.
 *
 * Settle (one transaction): the answer is billed as a buyer's would be (lib/upstream/metering.ts billUsage: our count
 * against the upstream's claim), priced by the clear's capped charge at the terms snapshotted at reservation
 * (meterProbeCharge: svc_metered_charge), the burn counted on the offer's day, and the ledger releases the hold and
 * pays the supplier its share (payProbe). The day's budget keeps the charge. Release (not answered, or answered
 * unusably, or swept after a crash) gives the hold and the budget back and pays nothing, as for a buyer.
 *
 * The price a probe is bought at is the offer's, at most the model's going price (lib/market/going-price.ts): the
 * round decides it, and it is what priceCents holds here.
 *
 * Lock order, as everywhere: probe_runs row, probe_days, offer_days, then ledger accounts in (kind, id) order.
 */

export type ReserveInput = ProbeTerms & {
  roundId: string;
  offerId: string;
  modelId: string;
  probe: string;
  day: Date;
  budgetMicros: bigint;
  /** The model's going price when the round chose this price (priceCents is never above it). */
  goingPriceCents: number;
};
export type ReserveResult = { ok: true; runId: string } | { ok: false; reason: "budget" | "balance" | "capacity" };

class Refused extends Error {
  constructor(readonly reason: "budget" | "balance" | "capacity") {
    super(reason);
  }
}

export async function reserveProbe(input: ReserveInput): Promise<ReserveResult> {
  if (input.maxChargeMicros > input.budgetMicros) return { ok: false, reason: "budget" };
  try {
    const runId = await db.$transaction(async (tx) => {
      const capacity = await tx.$queryRaw<{ remaining: bigint }[]>`
        SELECT svc_offer_remaining_micro_diem(o.daily_capacity_micro_diem, d.burned_micro_diem, d.held_micro_diem) AS remaining
        FROM offers o LEFT JOIN offer_days d ON d.offer_id = o.id AND d.day = ${input.day}::date
        WHERE o.id = ${input.offerId}::uuid`;
      if (!capacity[0] || BigInt(capacity[0].remaining) < input.maxBurnMicroDiem) throw new Refused("capacity");

      const budget = await tx.$queryRaw<{ day: Date }[]>`
        INSERT INTO probe_days (day, committed_micros, probes) VALUES (${input.day}::date, ${input.maxChargeMicros}::bigint, 1)
        ON CONFLICT (day) DO UPDATE
          SET committed_micros = probe_days.committed_micros + EXCLUDED.committed_micros, probes = probe_days.probes + 1
          WHERE probe_days.committed_micros + EXCLUDED.committed_micros <= ${input.budgetMicros}::bigint
        RETURNING day`;
      if (budget.length === 0) throw new Refused("budget");

      const platformAccountId = await holdPlatformFunds(tx, input.maxChargeMicros);
      if (!platformAccountId) throw new Refused("balance");

      const run = await tx.$queryRaw<{ id: string }[]>`
        INSERT INTO probe_runs (round_id, offer_id, model_id, probe, day, price_cents, input_micro_diem_per_mtok,
                                output_micro_diem_per_mtok, max_burn_micro_diem, max_charge_micros, platform_account_id,
                                going_price_cents)
        VALUES (${input.roundId}::uuid, ${input.offerId}::uuid, ${input.modelId}, ${input.probe}, ${input.day}::date,
                ${input.priceCents}, ${input.inputMicroDiemPerMTok}::bigint, ${input.outputMicroDiemPerMTok}::bigint,
                ${input.maxBurnMicroDiem}::bigint, ${input.maxChargeMicros}::bigint, ${platformAccountId}::uuid,
                ${input.goingPriceCents})
        RETURNING id::text`;
      return run[0].id;
    });
    return { ok: true, runId };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, reason: error.reason };
    throw error;
  }
}

/** What a probe found, stored with it (bounded by the judge). */
export type ProbeRecord = {
  outcome: "passed" | "failed" | "unanswered";
  failures: ProbeFailure[];
  answer: string | null;
  returnedModel: string | null;
  finishReason: string | null;
  httpStatus: number | null;
};

type LockedRun = {
  offerId: string;
  supplierId: string;
  day: Date;
  platformAccountId: string;
  terms: ProbeTerms;
};

async function lockReservedRun(tx: Tx, runId: string): Promise<LockedRun | null> {
  const rows = await tx.$queryRaw<
    {
      offer_id: string;
      supplier_id: string;
      day: Date;
      platform_account_id: string;
      price_cents: number;
      input_micro_diem_per_mtok: bigint;
      output_micro_diem_per_mtok: bigint;
      max_burn_micro_diem: bigint;
      max_charge_micros: bigint;
    }[]
  >`
    SELECT r.offer_id::text, o.supplier_id::text, r.day, r.platform_account_id::text, r.price_cents,
           r.input_micro_diem_per_mtok, r.output_micro_diem_per_mtok, r.max_burn_micro_diem, r.max_charge_micros
    FROM probe_runs r JOIN offers o ON o.id = r.offer_id
    WHERE r.id = ${runId}::uuid AND r.status = 'reserved'
    FOR UPDATE OF r`;
  const row = rows[0];
  if (!row) return null;
  return {
    offerId: row.offer_id,
    supplierId: row.supplier_id,
    day: row.day,
    platformAccountId: row.platform_account_id,
    terms: {
      priceCents: row.price_cents,
      inputMicroDiemPerMTok: BigInt(row.input_micro_diem_per_mtok),
      outputMicroDiemPerMTok: BigInt(row.output_micro_diem_per_mtok),
      maxBurnMicroDiem: BigInt(row.max_burn_micro_diem),
      maxChargeMicros: BigInt(row.max_charge_micros),
    },
  };
}

function recordColumns(record: ProbeRecord) {
  return {
    outcome: record.outcome,
    failures: JSON.stringify(record.failures),
    answer: record.answer,
    returnedModel: record.returnedModel?.slice(0, 200) ?? null,
    finishReason: record.finishReason?.slice(0, 32) ?? null,
  };
}

export type Settled = ProbeCharge;

/** Pays for an answered probe (see the top of this file). Null when the run is no longer reserved (swept): nothing paid. */
export async function settleProbe(
  runId: string,
  billed: { promptTokens: number; completionTokens: number },
  record: ProbeRecord,
): Promise<Settled | null> {
  return db.$transaction(async (tx) => {
    const run = await lockReservedRun(tx, runId);
    if (!run) return null;
    const settled = await meterProbeCharge(tx, run.terms, billed);

    await tx.$executeRaw`
      UPDATE probe_days SET committed_micros = committed_micros - (${run.terms.maxChargeMicros}::bigint - ${settled.chargeMicros}::bigint)
      WHERE day = ${run.day}::date`;
    if (settled.burnMicroDiem > 0n) {
      await tx.$executeRaw`
        INSERT INTO offer_days (offer_id, day, burned_micro_diem) VALUES (${run.offerId}::uuid, ${run.day}::date, ${settled.burnMicroDiem}::bigint)
        ON CONFLICT (offer_id, day) DO UPDATE SET burned_micro_diem = offer_days.burned_micro_diem + EXCLUDED.burned_micro_diem`;
    }
    await payProbe(tx, {
      probeRunId: runId,
      supplierId: run.supplierId,
      platformAccountId: run.platformAccountId,
      heldMicros: run.terms.maxChargeMicros,
      supplierMicros: settled.supplierMicros,
    });
    const c = recordColumns(record);
    await tx.$executeRaw`
      UPDATE probe_runs SET status = 'settled', outcome = ${c.outcome}::probe_outcome, failures = ${c.failures}::jsonb,
        answer = ${c.answer}, returned_model = ${c.returnedModel}, finish_reason = ${c.finishReason}, http_status = ${record.httpStatus},
        prompt_tokens = ${billed.promptTokens}, completion_tokens = ${billed.completionTokens},
        burn_micro_diem = ${settled.burnMicroDiem}::bigint, charge_micros = ${settled.chargeMicros}::bigint,
        supplier_micros = ${settled.supplierMicros}::bigint, fee_micros = ${settled.feeMicros}::bigint, settled_at = now()
      WHERE id = ${runId}::uuid`;
    return settled;
  });
}

/** Gives a reservation back unpaid (no answer, an unusable one, or a crash swept later). False when not reserved. */
export async function releaseProbe(runId: string, record: ProbeRecord): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const run = await lockReservedRun(tx, runId);
    if (!run) return false;
    await tx.$executeRaw`
      UPDATE probe_days SET committed_micros = committed_micros - ${run.terms.maxChargeMicros}::bigint WHERE day = ${run.day}::date`;
    await releasePlatformHold(tx, run.platformAccountId, run.terms.maxChargeMicros);
    const c = recordColumns(record);
    await tx.$executeRaw`
      UPDATE probe_runs SET status = 'released', outcome = ${c.outcome}::probe_outcome, failures = ${c.failures}::jsonb,
        answer = ${c.answer}, returned_model = ${c.returnedModel}, finish_reason = ${c.finishReason},
        http_status = ${record.httpStatus}, settled_at = now()
      WHERE id = ${runId}::uuid`;
    return true;
  });
}

/**
 * Reservations older than any probe can take (a process that died between reserving and settling) are released
 * unpaid. Bounded per call; the next round sweeps the rest.
 */
export async function sweepStaleProbes(now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - env.UPSTREAM_TIMEOUT_MS - 5 * 60_000);
  const stale = await db.$queryRaw<{ id: string }[]>`
    SELECT id::text FROM probe_runs WHERE status = 'reserved' AND created_at < ${cutoff} ORDER BY created_at LIMIT 500`;
  let released = 0;
  for (const { id } of stale) {
    const record: ProbeRecord = {
      outcome: "unanswered",
      failures: [],
      answer: null,
      returnedModel: null,
      finishReason: null,
      httpStatus: null,
    };
    if (await releaseProbe(id, record)) released++;
  }
  return released;
}
