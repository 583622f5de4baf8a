-- The platform's fee on a charge: what the supplier's share (svc_supplier_micros) leaves of it. Mirror: lib/money.ts
-- splitCharge.
CREATE OR REPLACE FUNCTION "svc_fee_micros"(p_charge_micros bigint, p_fee_bps integer) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT p_charge_micros - svc_supplier_micros(p_charge_micros, p_fee_bps)
$$;
