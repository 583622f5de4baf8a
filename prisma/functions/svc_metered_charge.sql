-- What an answer costs against its reservation, the one capped charge the clear (svc_clear_batch) and a probe's settle
-- (lib/ledger/probe-payments.ts) both apply: the burn of the tokens billed at the list prices the reservation
-- snapshotted (svc_cached_burn_micro_diem: the cached prompt tokens, svc_cached_prompt_tokens, at the cache-read
-- price the hold snapshotted), capped at the burn reserved, and its charge at the price reserved (svc_charge_micros),
-- capped at the amount reserved. A charge is never more than its hold, and capacity is never burned beyond what was
-- reserved (the reservation holds every prompt token at the input price, the worst case). Mirror: lib/money.ts
-- meteredCharge.
-- One row, as a table (20261205000000_clear_items): called in FROM (`CROSS JOIN LATERAL svc_metered_charge(...)`), a
-- SQL function returning a set is inlined into the calling statement, as the one-expression rules are; one returning
-- a record (OUT parameters) is not, and PostgreSQL 15 then plans its body again on every execution of the statement
-- that calls it: 0.13 ms a clear, measured against 0.01 ms inlined.
CREATE OR REPLACE FUNCTION "svc_metered_charge"(
  p_prompt_tokens bigint,
  p_cached_tokens bigint,
  p_completion_tokens bigint,
  p_input_micro_diem_per_mtok bigint,
  p_cache_read_micro_diem_per_mtok bigint,
  p_output_micro_diem_per_mtok bigint,
  p_price_cents integer,
  p_reserved_burn_micro_diem bigint,
  p_reserved_micros bigint
) RETURNS TABLE (burn_micro_diem bigint, charge_micros bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT b.burn, LEAST(svc_charge_micros(b.burn, p_price_cents), p_reserved_micros)
  FROM (SELECT LEAST(svc_cached_burn_micro_diem(p_prompt_tokens, p_cached_tokens, p_completion_tokens,
                                                p_input_micro_diem_per_mtok, p_cache_read_micro_diem_per_mtok,
                                                p_output_micro_diem_per_mtok),
                     p_reserved_burn_micro_diem)::bigint AS burn) b
$$;
