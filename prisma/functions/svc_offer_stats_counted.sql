-- Quality figures nobody can buy (#37; lib/market/quality/figures.ts): which of these forwards are measured into their
-- offer's figures (offer_stats). Element k is a forward of p_offer_ids[k] by source p_source_ids[k]: the buyer account
-- whose request it was, or the nil uuid for the platform's probes. Not measured: a forward by the offer's own supplier
-- (its account, which pays for its keys), or by no named source; and a buyer's forwards to one offer past the first
-- svc_quality_source_cap() of an hour (hour = svc_offer_stats_bucket / 12), counted in offer_stat_sources in the order
-- given. The probes are not capped. Writes offer_stat_sources (every forward offered, per source and hour, in
-- (offer, source) order) and returns one boolean per element. Called before offer_stats is written, by the clear
-- (svc_record_offer_answers) and by the failure report (lib/supply/offer-health.ts), so both lock in one order.
CREATE OR REPLACE FUNCTION "svc_offer_stats_counted"(p_offer_ids uuid[], p_source_ids uuid[], p_now timestamptz)
RETURNS boolean[]
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET jit = off
AS $$
DECLARE
  v_hour integer := svc_offer_stats_bucket(p_now) / 12;
  v_out boolean[];
BEGIN
  WITH i AS MATERIALIZED (
    SELECT x.n, x.offer_id, x.source_id,
           x.source_id IS NOT NULL AND o."supplier_id" IS NOT NULL AND x.source_id <> o."supplier_id" AS eligible,
           row_number() OVER (PARTITION BY x.offer_id, x.source_id ORDER BY x.n) AS k
    FROM unnest(p_offer_ids, p_source_ids) WITH ORDINALITY AS x(offer_id, source_id, n)
    LEFT JOIN "offers" o ON o."id" = x.offer_id
  ), g AS (
    SELECT i.offer_id, i.source_id, COUNT(*)::integer AS n FROM i WHERE i.eligible GROUP BY i.offer_id, i.source_id
  ), seen AS (
    INSERT INTO "offer_stat_sources" AS s ("offer_id", "hour", "source_id", "samples")
    SELECT g.offer_id, v_hour, g.source_id, g.n FROM g ORDER BY g.offer_id, g.source_id
    ON CONFLICT ("offer_id", "hour", "source_id") DO UPDATE SET "samples" = s."samples" + EXCLUDED."samples"
    RETURNING s."offer_id", s."source_id", s."samples"
  )
  SELECT array_agg(
           i.eligible AND (i.source_id = '00000000-0000-0000-0000-000000000000'::uuid
                           OR seen."samples" - g.n + i.k <= svc_quality_source_cap())
           ORDER BY i.n)
  INTO v_out
  FROM i
  LEFT JOIN g ON g.offer_id = i.offer_id AND g.source_id = i.source_id
  LEFT JOIN seen ON seen."offer_id" = i.offer_id AND seen."source_id" = i.source_id;
  RETURN COALESCE(v_out, '{}'::boolean[]);
END;
$$;
