-- The prompt tokens an answer bills at the cache-read price (issue 40), the verified figure: on an offer that caches
-- (its hold snapshotted a cache-read price), the larger of the upstream's claim (prompt_tokens_details.cached_tokens)
-- and svc's own count of the prefix it sent that offer within its declared retention, never more than the prompt
-- tokens billed. A supplier cannot bill a prefix it was just given as new; a buyer pays the cache price for exactly
-- that part. On an offer that does not declare caching: 0, whatever it claims (billed as before caching was priced).
-- NULL figures count as 0. Mirror: lib/money.ts cachedPromptTokens.
CREATE OR REPLACE FUNCTION "svc_cached_prompt_tokens"(
  p_prompt_tokens bigint,
  p_claimed_cached_tokens bigint,
  p_sent_cached_tokens bigint,
  p_offer_caches boolean
) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN p_offer_caches
              THEN LEAST(p_prompt_tokens, GREATEST(COALESCE(p_claimed_cached_tokens, 0), COALESCE(p_sent_cached_tokens, 0), 0))
              ELSE 0 END
$$;
