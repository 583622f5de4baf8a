-- The first of a buyer's provider preferences (the merged `provider` object: request over key over account, as
-- lib/market/provider-schemas.ts validates it) that an offer fails, or NULL when it meets them all (or there are none). In
-- this order: 'only' (offer ids or supplier public ids: the offer or its supplier must be listed), 'ignore' (neither
-- may be listed), 'quantizations' (its declared quantization must be listed), 'data_collection' ('deny' excludes an
-- offer that retains or trains on prompts), 'cancelled_billing' ('deny' excludes an offer declaring that its upstream
-- bills a cancelled stream in full, streaming.bills_cancelled_in_full), 'max_price' (USD per 1M tokens: the charge for 1M prompt, or completion,
-- tokens at the model's list price and the offer's price, svc_charge_micros, within it), 'require_verified' (true:
-- the offer's probe_status must be 'passing'; an unprobed, unverified, verifying or flagged offer misses it). The reservation routes only
-- to offers it returns NULL for (svc_reserve_batch); the 503's diagnosis names the last filter that left no offer
-- (lib/router/no-offer.ts). sort and the soft preferences only order offers; require_parameters and allow_fallbacks
-- change nothing here.
CREATE OR REPLACE FUNCTION "svc_offer_preference_miss"(
  p_prefs jsonb,
  p_offer_id uuid,
  p_supplier_account_id uuid,
  p_quantization text,
  p_retains_prompts boolean,
  p_trains_on_prompts boolean,
  p_bills_cancelled_in_full boolean,
  p_price_cents integer,
  p_input_micro_diem_per_mtok bigint,
  p_output_micro_diem_per_mtok bigint,
  p_probe_status text
) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE
    WHEN p_prefs IS NULL THEN NULL
    WHEN p_prefs ? 'only' AND NOT ((p_prefs -> 'only') ? p_offer_id::text
                                   OR (p_prefs -> 'only') ? svc_supplier_public_id(p_supplier_account_id)) THEN 'only'
    WHEN p_prefs ? 'ignore' AND ((p_prefs -> 'ignore') ? p_offer_id::text
                                 OR (p_prefs -> 'ignore') ? svc_supplier_public_id(p_supplier_account_id)) THEN 'ignore'
    WHEN p_prefs ? 'quantizations' AND NOT (p_prefs -> 'quantizations') ? p_quantization THEN 'quantizations'
    WHEN p_prefs ->> 'data_collection' = 'deny' AND (p_retains_prompts OR p_trains_on_prompts) THEN 'data_collection'
    WHEN p_prefs ->> 'cancelled_billing' = 'deny' AND p_bills_cancelled_in_full THEN 'cancelled_billing'
    WHEN svc_charge_micros(p_input_micro_diem_per_mtok, p_price_cents) > (p_prefs -> 'max_price' ->> 'prompt')::numeric * 1000000
      OR svc_charge_micros(p_output_micro_diem_per_mtok, p_price_cents) > (p_prefs -> 'max_price' ->> 'completion')::numeric * 1000000
      THEN 'max_price'
    WHEN p_prefs -> 'require_verified' = 'true'::jsonb AND p_probe_status IS DISTINCT FROM 'passing' THEN 'require_verified'
  END
$$;
