-- What a request's prompt costs on an offer, with the part svc sent that offer within its retention at the model's
-- cache-read price (issue 40): the charge (svc_charge_micros) of the prompt's burn (svc_cached_burn_micro_diem, no
-- completion) at the offer's price. The reservation orders offers by it when a request's prefix is cached somewhere
-- (cache affinity; provider.sort "price" compares these effective prices): an offer holding the prefix wins while its
-- effective price is the best. The completion is left out: its price is the same list price on every offer, and the
-- reserved output (max_tokens, or the model's cap) is a bound, not an expectation. NULL cached tokens: none.
CREATE OR REPLACE FUNCTION "svc_effective_prompt_micros"(
  p_prompt_tokens bigint,
  p_cached_tokens bigint,
  p_input_micro_diem_per_mtok bigint,
  p_cache_read_micro_diem_per_mtok bigint,
  p_price_cents integer
) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT svc_charge_micros(svc_cached_burn_micro_diem(p_prompt_tokens, COALESCE(p_cached_tokens, 0), 0,
                                                      p_input_micro_diem_per_mtok, p_cache_read_micro_diem_per_mtok,
                                                      0)::bigint,
                           p_price_cents)
$$;
