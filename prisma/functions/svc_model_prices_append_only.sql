-- The list-price history is append-only.
CREATE OR REPLACE FUNCTION svc_model_prices_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'model_prices is append-only (list-price history)';
END $$;
