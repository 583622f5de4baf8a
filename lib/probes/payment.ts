import "server-only";
import { db, type Tx } from "@/lib/db/client";
import { env } from "@/lib/env";
import { getOrCreateLedgerAccount } from "@/lib/ledger/accounts";
import { postEntry } from "@/lib/ledger/post-entry";
import type { ProbeFailure } from "@/lib/supply/probe-evidence";

/**
 * Paying for a probe as a buyer pays for a request: reserved before it is sent, settled from the answer.
 *
 * Reserve (one transaction): the day's budget is raised by the probe's most expensive answer with one conditional
 * upsert (probe_days: never beyond PROBE_DAILY_BUDGET_MICROS), and that amount is held on the platform fee account
 * (of the 16 shards, svc_platform_shard) with the most available, by one conditional update (available = balance -
 * held). Either refusal rolls both back and the probe is not sent: never a probe unpaid, never a negative balance.
 * An offer without that burn left today is not probed.
 *
 * Settle (one transaction): the answer is billed as a buyer's would be (lib/upstream/metering.ts billUsage: our count
 * against the upstream's claim), priced by the SQL rules at the prices snapshotted at reservation (svc_burn_micro_diem,
 * svc_charge_micros, svc_supplier_micros, svc_fee_micros; capped at the reservation), the burn counted on the offer's
 * day, the hold released, and one `probe` journal entry moves the supplier's share from the platform account to the
 * supplier (the fee is the platform's own: it stays). The day's budget keeps the charge. Release (not answered, or
 * answered unusably, or swept after a crash) gives the hold and the budget back and pays nothing, as for a buyer.
 *
 * Lock order, as everywhere: probe_runs row, probe_days, offer_days, then ledger accounts in (kind, id) order.
 */

export type ProbePrice = {
  priceCents: number;
  inputMicroDiemPerMTok: bigint;
  outputMicroDiemPerMTok: bigint;
  maxBurnMicroDiem: bigint;
  maxChargeMicros: bigint;
};

export type ReserveInput = ProbePrice & {
  roundId: string;
  offerId: string;
  modelId: string;
  probe: string;
  day: Date;
  budgetMicros: bigint;
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

      const held = await tx.$queryRaw<{ id: string }[]>`
        WITH pick AS (
          SELECT id FROM ledger_accounts
          WHERE kind = 'platform' AND balance_micros - held_micros >= ${input.maxChargeMicros}::bigint
          ORDER BY balance_micros - held_micros DESC, id LIMIT 1
          FOR UPDATE
        )
        UPDATE ledger_accounts la SET held_micros = la.held_micros + ${input.maxChargeMicros}::bigint
        FROM pick WHERE la.id = pick.id AND la.balance_micros - la.held_micros >= ${input.maxChargeMicros}::bigint
        RETURNING la.id::text`;
      if (held.length === 0) throw new Refused("balance");

      const run = await tx.$queryRaw<{ id: string }[]>`
        INSERT INTO probe_runs (round_id, offer_id, model_id, probe, day, price_cents, input_micro_diem_per_mtok,
                                output_micro_diem_per_mtok, max_burn_micro_diem, max_charge_micros, platform_account_id)
        VALUES (${input.roundId}::uuid, ${input.offerId}::uuid, ${input.modelId}, ${input.probe}, ${input.day}::date,
                ${input.priceCents}, ${input.inputMicroDiemPerMTok}::bigint, ${input.outputMicroDiemPerMTok}::bigint,
                ${input.maxBurnMicroDiem}::bigint, ${input.maxChargeMicros}::bigint, ${held[0].id}::uuid)
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
  offer_id: string;
  supplier_id: string;
  day: Date;
  max_charge_micros: bigint;
  platform_account_id: string;
};

async function lockReservedRun(tx: Tx, runId: string): Promise<LockedRun | null> {
  const rows = await tx.$queryRaw<LockedRun[]>`
    SELECT r.offer_id::text, o.supplier_id::text, r.day, r.max_charge_micros, r.platform_account_id::text
    FROM probe_runs r JOIN offers o ON o.id = r.offer_id
    WHERE r.id = ${runId}::uuid AND r.status = 'reserved'
    FOR UPDATE OF r`;
  return rows[0] ?? null;
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

export type Settled = { chargeMicros: bigint; supplierMicros: bigint; feeMicros: bigint; burnMicroDiem: bigint };

/** Pays for an answered probe (see the top of this file). Null when the run is no longer reserved (swept): nothing paid. */
export async function settleProbe(
  runId: string,
  billed: { promptTokens: number; completionTokens: number },
  record: ProbeRecord,
): Promise<Settled | null> {
  return db.$transaction(async (tx) => {
    const run = await lockReservedRun(tx, runId);
    if (!run) return null;
    const [price] = await tx.$queryRaw<{ burn: bigint; charge: bigint; share: bigint; fee: bigint }[]>`
      SELECT b.burn, c.charge, svc_supplier_micros(c.charge, ${env.PLATFORM_FEE_BPS}::integer) AS share,
             svc_fee_micros(c.charge, ${env.PLATFORM_FEE_BPS}::integer) AS fee
      FROM probe_runs r
      CROSS JOIN LATERAL (SELECT LEAST(svc_burn_micro_diem(${billed.promptTokens}::bigint, ${billed.completionTokens}::bigint,
                                                           r.input_micro_diem_per_mtok, r.output_micro_diem_per_mtok),
                                       r.max_burn_micro_diem)::bigint AS burn) b
      CROSS JOIN LATERAL (SELECT LEAST(svc_charge_micros(b.burn, r.price_cents), r.max_charge_micros) AS charge) c
      WHERE r.id = ${runId}::uuid`;
    const settled = {
      burnMicroDiem: BigInt(price.burn),
      chargeMicros: BigInt(price.charge),
      supplierMicros: BigInt(price.share),
      feeMicros: BigInt(price.fee),
    };

    await tx.$executeRaw`
      UPDATE probe_days SET committed_micros = committed_micros - (${run.max_charge_micros}::bigint - ${settled.chargeMicros}::bigint)
      WHERE day = ${run.day}::date`;
    if (settled.burnMicroDiem > 0n) {
      await tx.$executeRaw`
        INSERT INTO offer_days (offer_id, day, burned_micro_diem) VALUES (${run.offer_id}::uuid, ${run.day}::date, ${settled.burnMicroDiem}::bigint)
        ON CONFLICT (offer_id, day) DO UPDATE SET burned_micro_diem = offer_days.burned_micro_diem + EXCLUDED.burned_micro_diem`;
    }
    const supplier = await getOrCreateLedgerAccount(tx, "supplier", run.supplier_id);
    await tx.$queryRaw`
      SELECT id FROM ledger_accounts WHERE id IN (${supplier.id}::uuid, ${run.platform_account_id}::uuid) ORDER BY kind, id FOR UPDATE`;
    await releaseHeld(tx, run);
    if (settled.supplierMicros > 0n) {
      await postEntry(tx, {
        kind: "probe",
        probeRunId: runId,
        lines: [
          { ledgerAccountId: supplier.id, amountMicros: settled.supplierMicros },
          { ledgerAccountId: run.platform_account_id, amountMicros: -settled.supplierMicros },
        ],
      });
    }
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

async function releaseHeld(tx: Tx, run: LockedRun) {
  const released = await tx.$executeRaw`
    UPDATE ledger_accounts SET held_micros = held_micros - ${run.max_charge_micros}::bigint
    WHERE id = ${run.platform_account_id}::uuid AND held_micros >= ${run.max_charge_micros}::bigint`;
  if (released !== 1) throw new Error(`probe reservation on platform account ${run.platform_account_id} is not held`);
}

/** Gives a reservation back unpaid (no answer, an unusable one, or a crash swept later). False when not reserved. */
export async function releaseProbe(runId: string, record: ProbeRecord): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const run = await lockReservedRun(tx, runId);
    if (!run) return false;
    await tx.$executeRaw`
      UPDATE probe_days SET committed_micros = committed_micros - ${run.max_charge_micros}::bigint WHERE day = ${run.day}::date`;
    await releaseHeld(tx, run);
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
