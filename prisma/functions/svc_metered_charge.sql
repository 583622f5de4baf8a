-- What an answer costs against its reservation, the one capped charge the clear (svc_clear_batch) and a probe's settle
-- (lib/ledger/probe-payments.ts) both apply: the burn of the tokens billed at the list prices the reservation
-- snapshotted (svc_burn_micro_diem), capped at the burn reserved, and its charge at the price reserved
-- (svc_charge_micros), capped at the amount reserved. A charge is never more than its hold, and capacity is never
-- burned beyond what was reserved. Mirror: lib/money.ts meteredCharge.
CREATE OR REPLACE FUNCTION "svc_metered_charge"(
  p_prompt_tokens bigint,
  p_completion_tokens bigint,
  p_input_micro_diem_per_mtok bigint,
  p_output_micro_diem_per_mtok bigint,
  p_price_cents integer,
  p_reserved_burn_micro_diem bigint,
  p_reserved_micros bigint,
  OUT burn_micro_diem bigint,
  OUT charge_micros bigint
)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT b.burn, LEAST(svc_charge_micros(b.burn, p_price_cents), p_reserved_micros)
  FROM (SELECT LEAST(svc_burn_micro_diem(p_prompt_tokens, p_completion_tokens, p_input_micro_diem_per_mtok,
                                         p_output_micro_diem_per_mtok),
                     p_reserved_burn_micro_diem)::bigint AS burn) b
$$;
