-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "offer_status" AS ENUM ('active', 'paused', 'withdrawn');

-- CreateEnum
CREATE TYPE "hold_status" AS ENUM ('active', 'cleared', 'released');

-- CreateEnum
CREATE TYPE "ledger_account_kind" AS ENUM ('buyer', 'supplier', 'platform', 'external');

-- CreateEnum
CREATE TYPE "journal_entry_kind" AS ENUM ('topup', 'clear', 'withdrawal', 'withdrawal_reversal');

-- CreateEnum
CREATE TYPE "payment_status" AS ENUM ('pending', 'settled', 'failed');

-- CreateEnum
CREATE TYPE "withdrawal_status" AS ENUM ('pending', 'sent', 'failed');

-- CreateTable
CREATE TABLE "accounts" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "wallet_address" TEXT NOT NULL,
    "default_max_price_cents" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "siwe_nonces" (
    "nonce" TEXT NOT NULL,
    "wallet_address" TEXT NOT NULL,
    "issued_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "consumed_at" TIMESTAMPTZ(3),

    CONSTRAINT "siwe_nonces_pkey" PRIMARY KEY ("nonce")
);

-- CreateTable
CREATE TABLE "sessions" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "token_hash" TEXT NOT NULL,
    "account_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),
    "last_seen_at" TIMESTAMPTZ(3),
    "user_agent" TEXT,

    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "account_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "key_hash" TEXT NOT NULL,
    "max_price_cents" INTEGER,
    "spend_limit_micros" BIGINT,
    "spent_micros" BIGINT NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "models" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "input_micro_diem_per_mtok" BIGINT NOT NULL,
    "output_micro_diem_per_mtok" BIGINT NOT NULL,
    "context_tokens" INTEGER NOT NULL,
    "max_output_tokens" INTEGER NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "models_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "offers" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "supplier_id" UUID NOT NULL,
    "upstream_base_url" TEXT NOT NULL,
    "upstream_key_ciphertext" TEXT NOT NULL,
    "price_cents" INTEGER NOT NULL,
    "daily_capacity_micro_diem" BIGINT NOT NULL,
    "status" "offer_status" NOT NULL DEFAULT 'active',
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "unhealthy_until" TIMESTAMPTZ(3),
    "last_failure_at" TIMESTAMPTZ(3),
    "last_failure_reason" TEXT,
    "last_success_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "offers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "offer_models" (
    "offer_id" UUID NOT NULL,
    "model_id" TEXT NOT NULL,
    "upstream_model" TEXT NOT NULL,

    CONSTRAINT "offer_models_pkey" PRIMARY KEY ("offer_id","model_id")
);

-- CreateTable
CREATE TABLE "offer_days" (
    "offer_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "burned_micro_diem" BIGINT NOT NULL DEFAULT 0,
    "held_micro_diem" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "offer_days_pkey" PRIMARY KEY ("offer_id","day")
);

-- CreateTable
CREATE TABLE "holds" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "account_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "offer_id" UUID NOT NULL,
    "model_id" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "price_cents" INTEGER NOT NULL,
    "amount_micros" BIGINT NOT NULL,
    "burn_micro_diem" BIGINT NOT NULL,
    "status" "hold_status" NOT NULL DEFAULT 'active',
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settled_at" TIMESTAMPTZ(3),

    CONSTRAINT "holds_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "completions" (
    "id" TEXT NOT NULL,
    "hold_id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "api_key_id" UUID NOT NULL,
    "offer_id" UUID NOT NULL,
    "model_id" TEXT NOT NULL,
    "prompt_tokens" INTEGER NOT NULL,
    "completion_tokens" INTEGER NOT NULL,
    "usage_estimated" BOOLEAN NOT NULL DEFAULT false,
    "latency_ms" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "completions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "clears" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "completion_id" TEXT NOT NULL,
    "offer_id" UUID NOT NULL,
    "model_id" TEXT NOT NULL,
    "price_cents" INTEGER NOT NULL,
    "burn_micro_diem" BIGINT NOT NULL,
    "charge_micros" BIGINT NOT NULL,
    "supplier_micros" BIGINT NOT NULL,
    "fee_micros" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "clears_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_accounts" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "kind" "ledger_account_kind" NOT NULL,
    "owner_id" UUID,
    "balance_micros" BIGINT NOT NULL DEFAULT 0,
    "held_micros" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ledger_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "journal_entries" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "kind" "journal_entry_kind" NOT NULL,
    "payment_id" UUID,
    "clear_id" UUID,
    "withdrawal_id" UUID,
    "tx_hash" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "journal_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "journal_lines" (
    "id" BIGSERIAL NOT NULL,
    "entry_id" UUID NOT NULL,
    "ledger_account_id" UUID NOT NULL,
    "amount_micros" BIGINT NOT NULL,

    CONSTRAINT "journal_lines_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payments" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "account_id" UUID NOT NULL,
    "x402_version" INTEGER NOT NULL,
    "network" TEXT NOT NULL,
    "asset" TEXT NOT NULL,
    "payer" TEXT NOT NULL,
    "pay_to" TEXT NOT NULL,
    "amount_micros" BIGINT NOT NULL,
    "authorization_nonce" TEXT NOT NULL,
    "valid_after" BIGINT NOT NULL,
    "valid_before" BIGINT NOT NULL,
    "status" "payment_status" NOT NULL DEFAULT 'pending',
    "tx_hash" TEXT,
    "failure_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settled_at" TIMESTAMPTZ(3),

    CONSTRAINT "payments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "withdrawals" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "account_id" UUID NOT NULL,
    "to_address" TEXT NOT NULL,
    "amount_micros" BIGINT NOT NULL,
    "status" "withdrawal_status" NOT NULL DEFAULT 'pending',
    "tx_hash" TEXT,
    "failure_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "withdrawals_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "rate_limit_buckets" (
    "key" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "rate_limit_buckets_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE UNIQUE INDEX "accounts_wallet_address_key" ON "accounts"("wallet_address");

-- CreateIndex
CREATE INDEX "siwe_nonces_expires_at_idx" ON "siwe_nonces"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "sessions_token_hash_key" ON "sessions"("token_hash");

-- CreateIndex
CREATE INDEX "sessions_account_id_idx" ON "sessions"("account_id");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys"("key_hash");

-- CreateIndex
CREATE INDEX "api_keys_account_id_created_at_idx" ON "api_keys"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "offers_supplier_id_idx" ON "offers"("supplier_id");

-- CreateIndex
CREATE INDEX "offers_status_price_cents_created_at_idx" ON "offers"("status", "price_cents", "created_at");

-- CreateIndex
CREATE INDEX "offer_models_model_id_idx" ON "offer_models"("model_id");

-- CreateIndex
CREATE INDEX "offer_days_day_idx" ON "offer_days"("day");

-- CreateIndex
CREATE INDEX "holds_status_expires_at_idx" ON "holds"("status", "expires_at");

-- CreateIndex
CREATE INDEX "holds_account_id_idx" ON "holds"("account_id");

-- CreateIndex
CREATE UNIQUE INDEX "completions_hold_id_key" ON "completions"("hold_id");

-- CreateIndex
CREATE INDEX "completions_account_id_created_at_idx" ON "completions"("account_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "clears_completion_id_key" ON "clears"("completion_id");

-- CreateIndex
CREATE INDEX "clears_model_id_created_at_idx" ON "clears"("model_id", "created_at");

-- CreateIndex
CREATE INDEX "clears_created_at_idx" ON "clears"("created_at");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_accounts_kind_owner_id_key" ON "ledger_accounts"("kind", "owner_id");

-- CreateIndex
CREATE UNIQUE INDEX "journal_entries_payment_id_key" ON "journal_entries"("payment_id");

-- CreateIndex
CREATE UNIQUE INDEX "journal_entries_clear_id_key" ON "journal_entries"("clear_id");

-- CreateIndex
CREATE INDEX "journal_entries_withdrawal_id_idx" ON "journal_entries"("withdrawal_id");

-- CreateIndex
CREATE INDEX "journal_lines_entry_id_idx" ON "journal_lines"("entry_id");

-- CreateIndex
CREATE INDEX "journal_lines_ledger_account_id_id_idx" ON "journal_lines"("ledger_account_id", "id");

-- CreateIndex
CREATE INDEX "payments_status_created_at_idx" ON "payments"("status", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "payments_asset_payer_authorization_nonce_key" ON "payments"("asset", "payer", "authorization_nonce");

-- CreateIndex
CREATE INDEX "withdrawals_account_id_created_at_idx" ON "withdrawals"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "withdrawals_status_idx" ON "withdrawals"("status");

-- AddForeignKey
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "offers" ADD CONSTRAINT "offers_supplier_id_fkey" FOREIGN KEY ("supplier_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "offer_models" ADD CONSTRAINT "offer_models_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "offer_models" ADD CONSTRAINT "offer_models_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "offer_days" ADD CONSTRAINT "offer_days_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "holds" ADD CONSTRAINT "holds_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "holds" ADD CONSTRAINT "holds_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "holds" ADD CONSTRAINT "holds_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "holds" ADD CONSTRAINT "holds_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "completions" ADD CONSTRAINT "completions_hold_id_fkey" FOREIGN KEY ("hold_id") REFERENCES "holds"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "completions" ADD CONSTRAINT "completions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "completions" ADD CONSTRAINT "completions_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "completions" ADD CONSTRAINT "completions_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "completions" ADD CONSTRAINT "completions_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "clears" ADD CONSTRAINT "clears_completion_id_fkey" FOREIGN KEY ("completion_id") REFERENCES "completions"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "clears" ADD CONSTRAINT "clears_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "clears" ADD CONSTRAINT "clears_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "accounts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "journal_entries" ADD CONSTRAINT "journal_entries_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "journal_entries" ADD CONSTRAINT "journal_entries_clear_id_fkey" FOREIGN KEY ("clear_id") REFERENCES "clears"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "journal_entries" ADD CONSTRAINT "journal_entries_withdrawal_id_fkey" FOREIGN KEY ("withdrawal_id") REFERENCES "withdrawals"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "journal_lines" ADD CONSTRAINT "journal_lines_entry_id_fkey" FOREIGN KEY ("entry_id") REFERENCES "journal_entries"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "journal_lines" ADD CONSTRAINT "journal_lines_ledger_account_id_fkey" FOREIGN KEY ("ledger_account_id") REFERENCES "ledger_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "withdrawals" ADD CONSTRAINT "withdrawals_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;


-- ─── Ledger guards (hand-written) ───────────────────────────────────────────
-- The application debits with conditional updates; these are the database's own backstop.

-- Guards are triggers rather than CHECK constraints: Prisma 6.19's WASM schema engine panics introspecting
-- CHECK constraints (migrate diff / migrate dev), and a trigger gives a clearer message anyway.
CREATE FUNCTION "assert_ledger_account_within_bounds"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."kind" <> 'external' AND NEW."balance_micros" < 0 THEN
    RAISE EXCEPTION 'ledger account % would go negative (balance %)', NEW."id", NEW."balance_micros"
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW."held_micros" < 0 OR (NEW."kind" <> 'external' AND NEW."held_micros" > NEW."balance_micros") THEN
    RAISE EXCEPTION 'ledger account % would hold % of a balance of %', NEW."id", NEW."held_micros", NEW."balance_micros"
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER "ledger_accounts_within_bounds"
  BEFORE INSERT OR UPDATE ON "ledger_accounts"
  FOR EACH ROW EXECUTE FUNCTION "assert_ledger_account_within_bounds"();

CREATE FUNCTION "assert_offer_day_non_negative"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."burned_micro_diem" < 0 OR NEW."held_micro_diem" < 0 THEN
    RAISE EXCEPTION 'offer % capacity use on % would go negative', NEW."offer_id", NEW."day"
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER "offer_days_non_negative"
  BEFORE INSERT OR UPDATE ON "offer_days"
  FOR EACH ROW EXECUTE FUNCTION "assert_offer_day_non_negative"();

-- Every journal entry's lines sum to zero. An entry's lines are written together, in one INSERT statement;
-- a statement-level check fails that statement (rather than the COMMIT, which ORMs handle poorly).
CREATE FUNCTION "assert_journal_entries_balanced"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  bad record;
BEGIN
  SELECT l."entry_id", SUM(l."amount_micros") AS total INTO bad
  FROM "journal_lines" l
  WHERE l."entry_id" IN (SELECT DISTINCT "entry_id" FROM new_lines)
  GROUP BY l."entry_id"
  HAVING SUM(l."amount_micros") <> 0
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'journal entry % is unbalanced by % micros', bad."entry_id", bad.total
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "journal_lines_balanced"
  AFTER INSERT ON "journal_lines"
  REFERENCING NEW TABLE AS new_lines
  FOR EACH STATEMENT EXECUTE FUNCTION "assert_journal_entries_balanced"();

-- Journal lines are append-only: a posted movement is corrected by a new entry, never edited.
CREATE FUNCTION "refuse_journal_line_changes"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'journal lines are append-only' USING ERRCODE = 'check_violation';
END;
$$;

CREATE TRIGGER "journal_lines_append_only"
  BEFORE UPDATE OR DELETE ON "journal_lines"
  FOR EACH STATEMENT EXECUTE FUNCTION "refuse_journal_line_changes"();

-- The two system ledger accounts, at fixed ids (lib/ledger/system-accounts.ts): unique (kind, owner_id) does
-- not stop duplicates when owner_id is NULL, so they are created once here instead of upserted at run time.
INSERT INTO "ledger_accounts" ("id", "kind", "owner_id") VALUES
  ('00000000-0000-4000-8000-000000000001', 'platform', NULL),
  ('00000000-0000-4000-8000-000000000002', 'external', NULL);
