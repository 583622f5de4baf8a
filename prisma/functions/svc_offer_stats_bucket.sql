-- The 5-minute bucket an offer's measurement at p_at falls in (offer_stats.bucket): whole seconds since the epoch
-- divided by 300, rounded down. Windows are whole buckets (lib/market/quality). Mirror: lib/market/quality/buckets.ts
-- statsBucket (tests/integration/quality-rules.test.ts compares the two).
CREATE OR REPLACE FUNCTION "svc_offer_stats_bucket"(p_at timestamptz) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT floor(extract(epoch FROM p_at) / 300)::integer
$$;
