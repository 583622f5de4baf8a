-- Releases a hold that will not be cleared (upstream failure, or a crash left it past its deadline). Returns false
-- when the hold was no longer active (already cleared or released): releasing is idempotent. SET enable_seqscan = off,
-- SET jit = off: see svc_reserve_batch.
CREATE OR REPLACE FUNCTION "svc_release_hold"(p_hold_id uuid, p_now timestamptz) RETURNS boolean
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
AS $$
DECLARE
  v_hold "holds"%ROWTYPE;
BEGIN
  SELECT * INTO v_hold FROM "holds" WHERE "id" = p_hold_id AND "status" = 'active' FOR UPDATE;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  UPDATE "offer_days" SET "held_micro_diem" = "held_micro_diem" - v_hold."burn_micro_diem"
  WHERE "offer_id" = v_hold."offer_id" AND "day" = v_hold."day";
  UPDATE "ledger_accounts" SET "held_micros" = "held_micros" - v_hold."amount_micros"
  WHERE "kind" = 'buyer' AND "owner_id" = v_hold."account_id";
  -- The period's counter gets the amount back only while it still counts the period the hold was reserved in.
  UPDATE "api_keys"
  SET "spent_micros" = "spent_micros" - v_hold."amount_micros",
      "period_spent_micros" = "period_spent_micros"
        - CASE WHEN "period_start" = v_hold."key_period_start" THEN v_hold."amount_micros" ELSE 0 END
  WHERE "id" = v_hold."api_key_id";
  UPDATE "holds" SET "status" = 'released', "settled_at" = p_now WHERE "id" = v_hold."id";
  RETURN true;
END;
$$;
