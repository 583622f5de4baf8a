-- The latency histogram bin of an answer that took p_latency_ms upstream (offer_stats.latency_histogram): fixed,
-- log-scale bins whose lower bounds grow by √2 (2^(k/2) ms rounded, from 8 ms to 262,144 ms), so bin 0 is [0, 8) and
-- bin 31 is 262,144 ms and over. A percentile read back is exact to its bin. Mirror: lib/market/quality/buckets.ts
-- latencyBin and LATENCY_BIN_LOWER_BOUNDS (tests/integration/quality-rules.test.ts compares the two).
CREATE OR REPLACE FUNCTION "svc_latency_bin"(p_latency_ms bigint) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT width_bucket(GREATEST(p_latency_ms, 0), ARRAY[8, 11, 16, 23, 32, 45, 64, 91, 128, 181, 256, 362, 512, 724, 1024,
    1448, 2048, 2896, 4096, 5793, 8192, 11585, 16384, 23170, 32768, 46341, 65536, 92682, 131072, 185364, 262144]::bigint[])
$$;
