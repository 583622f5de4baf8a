-- On the book: routable at any price for the smallest burn (one micro-diem), i.e. active, healthy at p_now, not
-- delisted by a failed fidelity probe and with capacity left today. Every market view (book, depth, pool, the no-offer explanation) counts what this admits.
CREATE OR REPLACE FUNCTION "svc_offer_on_book"(
  p_status offer_status,
  p_unhealthy_until timestamptz,
  p_probe_delisted boolean,
  p_daily_capacity_micro_diem bigint,
  p_burned_micro_diem bigint,
  p_held_micro_diem bigint,
  p_now timestamptz
) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT svc_offer_routable(p_status, p_unhealthy_until, p_probe_delisted, 0, p_daily_capacity_micro_diem, p_burned_micro_diem,
                            p_held_micro_diem, 0, 1, p_now)
$$;
