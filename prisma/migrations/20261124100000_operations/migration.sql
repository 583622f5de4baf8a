-- Catalog management (issue 14): retired models, and the list-price history.
ALTER TABLE "models" ADD COLUMN "retired_at" TIMESTAMPTZ(3);

CREATE TABLE "model_prices" (
    "id" BIGSERIAL NOT NULL,
    "model_id" TEXT NOT NULL,
    "input_micro_diem_per_mtok" BIGINT NOT NULL,
    "output_micro_diem_per_mtok" BIGINT NOT NULL,
    "effective_from" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "model_prices_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "model_prices_model_id_effective_from_idx" ON "model_prices"("model_id", "effective_from");
ALTER TABLE "model_prices" ADD CONSTRAINT "model_prices_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The prices in force today are the first rows of the history.
INSERT INTO "model_prices" ("model_id", "input_micro_diem_per_mtok", "output_micro_diem_per_mtok", "effective_from")
SELECT "id", "input_micro_diem_per_mtok", "output_micro_diem_per_mtok", "created_at" FROM "models";

-- Every price change, whoever makes it, appends to the history; the history itself is append-only.
CREATE FUNCTION svc_record_model_price() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT'
     OR NEW.input_micro_diem_per_mtok IS DISTINCT FROM OLD.input_micro_diem_per_mtok
     OR NEW.output_micro_diem_per_mtok IS DISTINCT FROM OLD.output_micro_diem_per_mtok THEN
    INSERT INTO model_prices (model_id, input_micro_diem_per_mtok, output_micro_diem_per_mtok, effective_from)
    VALUES (NEW.id, NEW.input_micro_diem_per_mtok, NEW.output_micro_diem_per_mtok, clock_timestamp());
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER models_price_history AFTER INSERT OR UPDATE ON "models"
  FOR EACH ROW EXECUTE FUNCTION svc_record_model_price();

CREATE FUNCTION svc_model_prices_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'model_prices is append-only (list-price history)';
END $$;
CREATE TRIGGER model_prices_append_only BEFORE UPDATE ON "model_prices"
  FOR EACH ROW EXECUTE FUNCTION svc_model_prices_append_only();

-- Reconciliation pages getLogs in bounded block ranges and remembers where it stopped, per payment.
ALTER TABLE "payments" ADD COLUMN "logs_scanned_to" BIGINT;

-- Background jobs run once per tick across the fleet: the instance that advances a job's tick runs it.
CREATE TABLE "job_leases" (
    "name" TEXT NOT NULL,
    "tick" BIGINT NOT NULL,
    "holder" TEXT NOT NULL,
    "acquired_at" TIMESTAMPTZ(3) NOT NULL,
    "runs" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "job_leases_pkey" PRIMARY KEY ("name")
);

-- One relayer nonce sequence for every instance.
CREATE TABLE "relayer_nonces" (
    "address" TEXT NOT NULL,
    "next_nonce" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "relayer_nonces_pkey" PRIMARY KEY ("address")
);
