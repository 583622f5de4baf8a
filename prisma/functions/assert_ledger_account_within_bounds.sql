-- Ledger guard (a trigger rather than a CHECK: Prisma 6.19's WASM schema engine panics introspecting CHECK
-- constraints): a non-external account never goes negative, and never holds more than its balance.
CREATE OR REPLACE FUNCTION "assert_ledger_account_within_bounds"() RETURNS trigger
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
