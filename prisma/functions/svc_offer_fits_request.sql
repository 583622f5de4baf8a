-- An offer serves a request of this size by what its supplier declares (offers.context_tokens, max_output_tokens; null
-- = the model's, which the request was already sized against): the reserved prompt plus the worst-case output within
-- its context, the worst-case output within its output cap. The worst case of a request without max_tokens is the
-- model's output cap, so an offer declaring a smaller one serves only requests that ask for at most that.
CREATE OR REPLACE FUNCTION "svc_offer_fits_request"(
  p_context_tokens integer,
  p_max_output_tokens integer,
  p_prompt_tokens integer,
  p_output_tokens integer
) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT (p_context_tokens IS NULL OR p_prompt_tokens::bigint + p_output_tokens <= p_context_tokens)
     AND (p_max_output_tokens IS NULL OR p_output_tokens <= p_max_output_tokens)
$$;
