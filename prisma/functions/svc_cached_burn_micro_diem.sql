-- Capacity burn in micro-diem of an answer some of whose prompt tokens were cached (issue 40): the uncached prompt
-- tokens at the input price, the cached ones (within the prompt) at the cache-read price (NULL: the model has none,
-- they cost the input price), the completion at the output price, / 1M, rounded up once. Exact, as the plain burn
-- is, which calls this with nothing cached. Mirror: lib/money.ts burnMicroDiem.
CREATE OR REPLACE FUNCTION "svc_cached_burn_micro_diem"(
  p_prompt_tokens bigint,
  p_cached_tokens bigint,
  p_completion_tokens bigint,
  p_input_micro_diem_per_mtok bigint,
  p_cache_read_micro_diem_per_mtok bigint,
  p_output_micro_diem_per_mtok bigint
) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT div((p_prompt_tokens::numeric - LEAST(p_cached_tokens, p_prompt_tokens)) * p_input_micro_diem_per_mtok
             + LEAST(p_cached_tokens, p_prompt_tokens)::numeric * COALESCE(p_cache_read_micro_diem_per_mtok, p_input_micro_diem_per_mtok)
             + p_completion_tokens::numeric * p_output_micro_diem_per_mtok + 999999, 1000000)
$$;
