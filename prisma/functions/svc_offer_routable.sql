-- An offer can take a request now: it is active, healthy at p_now, not delisted by a failed fidelity probe
-- (offers.probe_delisted, lib/probes), priced at or below the buyer's max, and has the request's burn left today (svc_offer_model_serves says whether it serves the request's features). The reservation
-- routes by it (svc_reserve_batch), and the book is what it admits at any price for the smallest burn
-- (svc_offer_on_book).
CREATE OR REPLACE FUNCTION "svc_offer_routable"(
  p_status offer_status,
  p_unhealthy_until timestamptz,
  p_probe_delisted boolean,
  p_price_cents integer,
  p_daily_capacity_micro_diem bigint,
  p_burned_micro_diem bigint,
  p_held_micro_diem bigint,
  p_max_price_cents integer,
  p_burn_micro_diem bigint,
  p_now timestamptz
) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT p_status = 'active' AND svc_offer_healthy(p_unhealthy_until, p_now) AND NOT p_probe_delisted
     AND p_price_cents <= p_max_price_cents
     AND svc_offer_remaining_micro_diem(p_daily_capacity_micro_diem, p_burned_micro_diem, p_held_micro_diem) >= p_burn_micro_diem
$$;
