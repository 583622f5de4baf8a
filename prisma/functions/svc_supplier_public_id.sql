-- A supplier's public id: `sup_` and the first 24 hex digits of SHA-256 over 'svc supplier:' and its account id. The
-- buyer's provider.only / provider.ignore name suppliers by it (svc_offer_preference_miss). Mirror:
-- lib/supply/public-id.ts supplierPublicId (tests/integration/money-rules.test.ts holds them together).
CREATE OR REPLACE FUNCTION "svc_supplier_public_id"(p_supplier_account_id uuid) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT 'sup_' || left(encode(sha256(convert_to('svc supplier:' || p_supplier_account_id::text, 'UTF8')), 'hex'), 24)
$$;
