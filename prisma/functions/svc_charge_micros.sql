-- A charge in micro-USDC: ceil(burn x price in cents per diem / 100), so one diem at 100 cents costs one USDC. In
-- bigint: raises "bigint out of range" when burn x price + 99 does not fit (svc_reserve_batch refuses a burn whose
-- charge at the highest price could not fit before it gets here). Mirror: lib/money.ts chargeMicros.
CREATE OR REPLACE FUNCTION "svc_charge_micros"(p_burn_micro_diem bigint, p_price_cents integer) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT (p_burn_micro_diem * p_price_cents + 99) / 100
$$;
