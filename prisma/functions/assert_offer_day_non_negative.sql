-- Ledger guard: an offer's burned and held capacity never go negative.
CREATE OR REPLACE FUNCTION "assert_offer_day_non_negative"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."burned_micro_diem" < 0 OR NEW."held_micro_diem" < 0 THEN
    RAISE EXCEPTION 'offer % capacity use on % would go negative', NEW."offer_id", NEW."day"
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
