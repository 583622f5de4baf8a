-- Health (lib/supply/offer-health.ts): an offer that served a completion ends its failure streak and any cooldown,
-- refreshing last_success_at at most once a minute (an offer already healthy and seen within the minute is not
-- written, so a busy offer's row is not rewritten by every clear). p_offer_ids: the offers served, repeats allowed;
-- each is locked once, in id order (the clear locks offers after every money row: holds, offer days, balances, keys,
-- earnings; the failure report locks an offer before its stats, as the clear does). Called by the clear
-- (svc_clear_batch) for its batch. SET as the clear's own (see svc_reserve_batch), so that a call from anywhere plans
-- as it does.
CREATE OR REPLACE FUNCTION "svc_record_offer_success"(p_offer_ids uuid[], p_now timestamptz) RETURNS void
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET jit = off
AS $$
BEGIN
  WITH locked AS MATERIALIZED (
    SELECT o."id" FROM "offers" o
    WHERE o."id" = ANY(p_offer_ids)
      AND (o."consecutive_failures" > 0 OR o."unhealthy_until" IS NOT NULL OR o."last_success_at" IS NULL
           OR o."last_success_at" < p_now - interval '60 seconds')
    ORDER BY o."id"
    FOR NO KEY UPDATE OF o
  )
  UPDATE "offers" o SET "consecutive_failures" = 0, "unhealthy_until" = NULL, "last_success_at" = p_now
  FROM locked l
  WHERE o."id" = l."id"
    AND (o."consecutive_failures" > 0 OR o."unhealthy_until" IS NOT NULL OR o."last_success_at" IS NULL
         OR o."last_success_at" < p_now - interval '60 seconds');
END;
$$;
