-- Quality (lib/market/quality): answers measured into offer_stats, per offer and 5-minute bucket
-- (svc_offer_stats_bucket of p_now): each is a forward answered, its latency binned (svc_latency_bin) into the
-- bucket's histogram (svc_latency_histogram, svc_histogram_add), its completion tokens and a dispute counted. One
-- element per answer in each array (p_offer_ids[k] answered p_source_ids[k], the buyer account, in p_latency_ms[k],
-- ...); only the answers svc_offer_stats_counted measures (none by the offer's own supplier, at most a few per buyer and
-- hour: #37); written once per (offer, bucket), in offer order. Called by the clear (svc_clear_batch) for its batch, last: the failure report
-- (lib/supply/offer-health.ts) locks an offer's row before its stats row, and so does the clear. SET as the clear's own
-- (see svc_reserve_batch), so that a call from anywhere plans as it does.
CREATE OR REPLACE FUNCTION "svc_record_offer_answers"(
  p_offer_ids uuid[],
  p_source_ids uuid[],
  p_latency_ms bigint[],
  p_completion_tokens bigint[],
  p_disputed boolean[],
  p_now timestamptz
) RETURNS void
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET jit = off
AS $$
DECLARE
  v_counted boolean[] := svc_offer_stats_counted(p_offer_ids, p_source_ids, p_now);
BEGIN
  INSERT INTO "offer_stats" AS s ("offer_id", "bucket", "forwards", "answers", "disputed", "latency_ms_sum",
                                  "completion_tokens", "latency_histogram")
  SELECT a.offer_id, svc_offer_stats_bucket(p_now), a.n, a.n, a.disputed, a.latency, a.tokens,
         svc_latency_histogram(a.bins)
  FROM (
    SELECT i.offer_id, COUNT(*)::integer AS n, (COUNT(*) FILTER (WHERE i.disputed))::integer AS disputed,
           SUM(i.latency)::bigint AS latency, SUM(i.tokens)::bigint AS tokens,
           array_agg(svc_latency_bin(i.latency)) AS bins
    FROM unnest(p_offer_ids, p_latency_ms, p_completion_tokens, p_disputed, v_counted)
      AS i(offer_id, latency, tokens, disputed, counted)
    WHERE i.counted
    GROUP BY i.offer_id
  ) a
  ORDER BY a.offer_id
  ON CONFLICT ("offer_id", "bucket") DO UPDATE
  SET "forwards" = s."forwards" + EXCLUDED."forwards",
      "answers" = s."answers" + EXCLUDED."answers",
      "disputed" = s."disputed" + EXCLUDED."disputed",
      "latency_ms_sum" = s."latency_ms_sum" + EXCLUDED."latency_ms_sum",
      "completion_tokens" = s."completion_tokens" + EXCLUDED."completion_tokens",
      "latency_histogram" = svc_histogram_add(s."latency_histogram", EXCLUDED."latency_histogram");
END;
$$;
