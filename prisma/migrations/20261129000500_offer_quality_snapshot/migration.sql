-- Market quality (#23): the figures routing sorts by, one row per offer measured from real traffic (refreshed by a
-- background job from the per-offer measurements, lib/market/quality). The reservation reads it only when a buyer
-- sorts by latency or throughput or states a soft preference; null = not enough traffic to say.
CREATE TABLE "offer_quality" (
  "offer_id" uuid NOT NULL,
  -- Median upstream latency of answered forwards, ms: the 1 h window when it has the minimum sample, else the 24 h.
  "latency_p50_ms" integer,
  -- Completion tokens per second of upstream time, over the same window.
  "throughput_tps" double precision,
  "refreshed_at" timestamptz(3) NOT NULL,
  CONSTRAINT "offer_quality_pkey" PRIMARY KEY ("offer_id"),
  CONSTRAINT "offer_quality_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
