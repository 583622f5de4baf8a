-- Capacity burn in micro-diem: tokens x list price (micro-diem per 1M tokens) / 1M, rounded up so capacity is never
-- under-counted. Exact (numeric, for non-negative counts and prices): the caller says what a burn beyond bigint means
-- (svc_reserve_batch refuses the item, svc_clear_batch caps the burn at the hold's). Mirror: lib/money.ts burnMicroDiem.
CREATE OR REPLACE FUNCTION "svc_burn_micro_diem"(
  p_prompt_tokens bigint,
  p_completion_tokens bigint,
  p_input_micro_diem_per_mtok bigint,
  p_output_micro_diem_per_mtok bigint
) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT div(p_prompt_tokens::numeric * p_input_micro_diem_per_mtok
             + p_completion_tokens::numeric * p_output_micro_diem_per_mtok + 999999, 1000000)
$$;
