-- A latency histogram of some answers: element k + 1 counts the answers in bin k (svc_latency_bin), one element per
-- bin. The clear adds a batch's histogram to its offer's bucket (svc_clear_batch, with svc_histogram_add). PL/pgSQL, not
-- SQL: an aggregate in a SQL function is not inlined, and a SQL function not inlined is planned again on every call.
CREATE OR REPLACE FUNCTION "svc_latency_histogram"(p_bins integer[]) RETURNS integer[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
  v_hist integer[] := array_fill(0, ARRAY[svc_latency_bin(9223372036854775807) + 1]);
  v_bin integer;
BEGIN
  FOREACH v_bin IN ARRAY COALESCE(p_bins, '{}'::integer[]) LOOP
    v_hist[v_bin + 1] := v_hist[v_bin + 1] + 1;
  END LOOP;
  RETURN v_hist;
END;
$$;
