-- Probes pay a bounded price and back off from offers they flagged (#34 finding 4).
--
-- The going price a probe run was bought under (lib/market/going-price.ts): its price_cents is the offer's price, at
-- most this. Null for runs bought before it existed (at the offer's price).
ALTER TABLE "probe_runs" ADD COLUMN "going_price_cents" integer;

-- A flagged offer is not probed again before probe_due_at (null: due at the next round). probe_flag_streak counts the
-- rounds in a row that flagged it, and doubles the wait (PROBE_FLAGGED_BACKOFF_MS .. PROBE_FLAGGED_BACKOFF_MAX_MS);
-- a passing round resets both, a new upstream or model list makes the offer due again.
ALTER TABLE "offers" ADD COLUMN "probe_flag_streak" integer NOT NULL DEFAULT 0;
ALTER TABLE "offers" ADD COLUMN "probe_due_at" timestamptz(3);
