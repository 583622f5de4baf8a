-- The most forwards of one source (a buyer account) measured per offer and hour (svc_offer_stats_counted): a handful
-- of accounts cannot move an offer's published figures, however much they trade. The probes are not capped. Mirror:
-- lib/market/quality/figures.ts SAMPLES_PER_SOURCE_HOUR (tests/integration/quality-rules.test.ts compares the two).
CREATE OR REPLACE FUNCTION "svc_quality_source_cap"() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT 3
$$;
