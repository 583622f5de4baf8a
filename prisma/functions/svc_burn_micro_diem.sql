-- Capacity burn in micro-diem: tokens x list price (micro-diem per 1M tokens) / 1M, rounded up so capacity is never
-- under-counted. Exact (numeric, for non-negative counts and prices): the caller says what a burn beyond bigint means
-- (svc_reserve_batch refuses the item, svc_clear_batch caps the burn at the hold's). Mirror: lib/money.ts burnMicroDiem.
-- The prompt tokens include any cached ones, all at the input price: the worst case the reservation holds
-- (svc_cached_burn_micro_diem prices the cached part at the cache-read price).
CREATE OR REPLACE FUNCTION "svc_burn_micro_diem"(
  p_prompt_tokens bigint,
  p_completion_tokens bigint,
  p_input_micro_diem_per_mtok bigint,
  p_output_micro_diem_per_mtok bigint
) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT svc_cached_burn_micro_diem(p_prompt_tokens, 0, p_completion_tokens, p_input_micro_diem_per_mtok, NULL,
                                    p_output_micro_diem_per_mtok)
$$;
