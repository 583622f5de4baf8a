-- An offer is healthy at p_now unless it is cooling down after upstream failures (lib/supply/offer-health.ts states
-- when it cools down and for how long). Mirror: lib/supply/offer-health.ts isHealthy.
CREATE OR REPLACE FUNCTION "svc_offer_healthy"(p_unhealthy_until timestamptz, p_now timestamptz) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT p_unhealthy_until IS NULL OR p_unhealthy_until <= p_now
$$;
