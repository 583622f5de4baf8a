-- The supplier's share of a charge: floor(charge x (10000 - fee) / 10000), the fee in basis points; the platform gets
-- the rest (svc_fee_micros), so the two always add up to the charge. In bigint: raises "bigint out of range" when
-- charge x (10000 - fee) does not fit. Mirror: lib/money.ts splitCharge.
CREATE OR REPLACE FUNCTION "svc_supplier_micros"(p_charge_micros bigint, p_fee_bps integer) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT p_charge_micros * (10000 - p_fee_bps) / 10000
$$;
