-- Quality figures nobody can buy (#37): who an offer's measurements came from. Per offer, hour (the 5-minute stats
-- bucket / 12) and source (a buyer account; the probes as one source, the nil uuid), how many of its forwards that hour
-- were offered for measuring (svc_offer_stats_counted: the supplier's own account is never a source, and a source's
-- forwards past the first few of an hour are not measured). Kept as long as offer_stats (the refresh job prunes both).
CREATE TABLE "offer_stat_sources" (
  "offer_id" UUID NOT NULL,
  "hour" INTEGER NOT NULL,
  "source_id" UUID NOT NULL,
  "samples" INTEGER NOT NULL DEFAULT 0,

  CONSTRAINT "offer_stat_sources_pkey" PRIMARY KEY ("offer_id", "hour", "source_id")
);
CREATE INDEX "offer_stat_sources_hour_idx" ON "offer_stat_sources"("hour");
ALTER TABLE "offer_stat_sources" ADD CONSTRAINT "offer_stat_sources_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Routing by answer checks (#37): the routing snapshot carries each offer's tool-call/json_schema error rate (null below
-- the minimum of checked answers) and whether it stands well above its model's median (lib/market/quality/answer-checks.ts).
ALTER TABLE "offer_quality"
  ADD COLUMN "answer_error_rate" DOUBLE PRECISION,
  ADD COLUMN "answer_demoted" BOOLEAN NOT NULL DEFAULT false;

-- svc_record_offer_answers takes each answer's source (the buyer account): the old signature goes, prisma/functions/
-- installs the new one after the migrations.
DROP FUNCTION IF EXISTS "svc_record_offer_answers"(uuid[], bigint[], bigint[], boolean[], timestamptz);
