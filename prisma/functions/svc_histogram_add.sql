-- Two histograms added element by element (the longer one's length; a missing element counts 0): a bucket's stored
-- latency histogram plus a batch's (svc_clear_batch). PL/pgSQL for the reason svc_latency_histogram gives.
CREATE OR REPLACE FUNCTION "svc_histogram_add"(p_a integer[], p_b integer[]) RETURNS integer[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
  v_sum integer[] := array_fill(0, ARRAY[GREATEST(COALESCE(cardinality(p_a), 0), COALESCE(cardinality(p_b), 0))]);
  i integer;
BEGIN
  FOR i IN 1 .. cardinality(v_sum) LOOP
    v_sum[i] := COALESCE(p_a[i], 0) + COALESCE(p_b[i], 0);
  END LOOP;
  RETURN v_sum;
END;
$$;
