-- Market quality (#23): what each offer's real traffic measured, in 5-minute buckets (svc_offer_stats_bucket). The
-- clear adds its batch's answers (svc_clear_batch), a failure that was the supplier's adds a forward that was not
-- answered (lib/supply/offer-health.ts reportUpstreamFailure), both in the statement they already make. The public
-- offers list and the routing snapshot (offer_quality) read the 1 h and 24 h windows from it (lib/market/quality);
-- its refresh job deletes buckets older than two days, so an offer holds at most 576 rows.
CREATE TABLE "offer_stats" (
  "offer_id" uuid NOT NULL,
  -- floor(epoch seconds / 300): the 5-minute bucket (svc_offer_stats_bucket).
  "bucket" integer NOT NULL,
  -- Answers billed plus failures that were the supplier's.
  "forwards" integer NOT NULL DEFAULT 0,
  -- Answers billed (cleared).
  "answers" integer NOT NULL DEFAULT 0,
  -- Answers whose claimed usage exceeded svc's own count (billed at svc's).
  "disputed" integer NOT NULL DEFAULT 0,
  -- Over the answers: the upstream's latency (forward sent to answer read) and the completion tokens billed.
  "latency_ms_sum" bigint NOT NULL DEFAULT 0,
  "completion_tokens" bigint NOT NULL DEFAULT 0,
  -- Answers per latency bin (svc_latency_bin: element k+1 counts bin k), empty until the first answer.
  "latency_histogram" integer[] NOT NULL DEFAULT '{}',
  CONSTRAINT "offer_stats_pkey" PRIMARY KEY ("offer_id", "bucket"),
  CONSTRAINT "offer_stats_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- The refresh job prunes by bucket.
CREATE INDEX "offer_stats_bucket_idx" ON "offer_stats"("bucket");
