-- Fidelity probes (#23, lib/probes): the platform buys a few deterministic requests from each live offer, at the
-- offer's price, and judges the answers. One probe_runs row per offer × model × probe × round: reserved before it is
-- sent (its most expensive answer held on a platform fee account and counted against the day's budget), then settled
-- (paid by a `probe` journal entry: the platform account pays the supplier's share of the charge; the fee is the
-- platform's own) or released (not answered, or answered unusably: nothing paid, as for a buyer). The evidence columns
-- of old rounds are pruned; the money columns stay, as clears do.

ALTER TYPE "journal_entry_kind" ADD VALUE 'probe';

CREATE TYPE "probe_run_status" AS ENUM ('reserved', 'settled', 'released');
CREATE TYPE "probe_outcome" AS ENUM ('passed', 'failed', 'unanswered');

CREATE TABLE "probe_runs" (
  "id" uuid NOT NULL DEFAULT gen_random_uuid(),
  "round_id" uuid NOT NULL,
  "offer_id" uuid NOT NULL,
  "model_id" text NOT NULL,
  "probe" text NOT NULL,
  -- The UTC day whose budget and whose offer-day capacity the probe counts on.
  "day" date NOT NULL,
  "status" "probe_run_status" NOT NULL DEFAULT 'reserved',
  "outcome" "probe_outcome",
  -- The failed checks, [{check, expected, got}], each string bounded (lib/probes/judge.ts).
  "failures" jsonb,
  -- The normalized answer the consensus compares (bounded), the answer's own model and finish reason, the HTTP status.
  "answer" text,
  "returned_model" text,
  "finish_reason" text,
  "http_status" integer,
  -- The prices the probe was bought at (snapshotted at reservation, as a hold does) and its most expensive answer.
  "price_cents" integer NOT NULL,
  "input_micro_diem_per_mtok" bigint NOT NULL,
  "output_micro_diem_per_mtok" bigint NOT NULL,
  "max_burn_micro_diem" bigint NOT NULL,
  "max_charge_micros" bigint NOT NULL,
  -- The platform fee account holding max_charge while reserved, and paying the supplier's share when settled.
  "platform_account_id" uuid NOT NULL,
  "prompt_tokens" integer,
  "completion_tokens" integer,
  "burn_micro_diem" bigint NOT NULL DEFAULT 0,
  "charge_micros" bigint NOT NULL DEFAULT 0,
  "supplier_micros" bigint NOT NULL DEFAULT 0,
  "fee_micros" bigint NOT NULL DEFAULT 0,
  "created_at" timestamptz(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "settled_at" timestamptz(3),
  CONSTRAINT "probe_runs_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "probe_runs_offer_id_created_at_idx" ON "probe_runs"("offer_id", "created_at");
CREATE INDEX "probe_runs_round_id_idx" ON "probe_runs"("round_id");
CREATE INDEX "probe_runs_status_created_at_idx" ON "probe_runs"("status", "created_at");
ALTER TABLE "probe_runs" ADD CONSTRAINT "probe_runs_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "probe_runs" ADD CONSTRAINT "probe_runs_platform_account_id_fkey" FOREIGN KEY ("platform_account_id") REFERENCES "ledger_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The daily budget: what the day's probes may cost at most (reserved + charged), raised atomically against
-- PROBE_DAILY_BUDGET_MICROS before a probe is sent and lowered to its real charge when it settles.
CREATE TABLE "probe_days" (
  "day" date NOT NULL,
  "committed_micros" bigint NOT NULL DEFAULT 0,
  "probes" integer NOT NULL DEFAULT 0,
  CONSTRAINT "probe_days_pkey" PRIMARY KEY ("day")
);

-- A probe's payment is its journal entry, as a clear's is.
ALTER TABLE "journal_entries" ADD COLUMN "probe_run_id" uuid;
CREATE UNIQUE INDEX "journal_entries_probe_run_id_key" ON "journal_entries"("probe_run_id");
ALTER TABLE "journal_entries" ADD CONSTRAINT "journal_entries_probe_run_id_fkey" FOREIGN KEY ("probe_run_id") REFERENCES "probe_runs"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
