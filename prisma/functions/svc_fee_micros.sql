-- The platform's fee on a charge: what the supplier's share (svc_supplier_micros) leaves of it. Mirror: lib/money.ts
-- splitCharge. The charge appears twice in the body, so the planner inlines a call only when its charge argument is
-- cheap to evaluate (a column, or svc_clear_batch's LEAST of the charge and the hold's amount; checked in
-- tests/integration/sql-functions.test.ts); pass a computed charge through a column or LATERAL otherwise.
CREATE OR REPLACE FUNCTION "svc_fee_micros"(p_charge_micros bigint, p_fee_bps integer) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT p_charge_micros - svc_supplier_micros(p_charge_micros, p_fee_bps)
$$;
