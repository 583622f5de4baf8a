-- When a key's spend-limit period began, for a reset kind and an instant: the start of the UTC day, week (Monday) or
-- month that holds p_at; NULL for a lifetime limit (p_reset NULL). The next reset is that start plus one day, week or
-- month. Mirror: lib/auth/key-periods.ts keyPeriodStart (and keyPeriodEnd for the next reset).
CREATE OR REPLACE FUNCTION "svc_key_period_start"(p_reset "key_limit_reset", p_at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT date_trunc(CASE p_reset WHEN 'daily' THEN 'day' WHEN 'weekly' THEN 'week' WHEN 'monthly' THEN 'month' END,
                    p_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
$$;
