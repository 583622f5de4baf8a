-- What is left of an offer's capacity today: daily capacity - burned - held, from today's offer_days row (NULL burned
-- and held: no row yet, nothing used). Negative when the capacity was cut below today's use: nothing fits, and the
-- views show zero (GREATEST(.., 0); mirror: lib/supply/capacity.ts remainingMicroDiem).
CREATE OR REPLACE FUNCTION "svc_offer_remaining_micro_diem"(
  p_daily_capacity_micro_diem bigint,
  p_burned_micro_diem bigint,
  p_held_micro_diem bigint
) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT p_daily_capacity_micro_diem - COALESCE(p_burned_micro_diem, 0) - COALESCE(p_held_micro_diem, 0)
$$;
