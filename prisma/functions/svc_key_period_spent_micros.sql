-- What a key has spent (reserved and charged) in the period that holds p_at, from its counter (api_keys.period_start,
-- period_spent_micros): the counter when it counts that period, or a later one (another instance's clock ran ahead
-- and moved it on: counting it is the safe side), else 0, since a period that has passed leaves nothing against the
-- current one. 0 for a lifetime limit (p_reset NULL). Mirror: lib/auth/key-periods.ts keyPeriodSpentMicros.
CREATE OR REPLACE FUNCTION "svc_key_period_spent_micros"(
  p_reset "key_limit_reset",
  p_period_start timestamptz,
  p_period_spent_micros bigint,
  p_at timestamptz
) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN p_period_start >= svc_key_period_start(p_reset, p_at) THEN p_period_spent_micros ELSE 0 END
$$;
