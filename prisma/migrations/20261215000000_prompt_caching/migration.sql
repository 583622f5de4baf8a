-- Prompt caching priced and verified (issue 40). Hand-written.
--
-- Prices: a model's cache-read price (and cache-write price, where its providers charge one), in the units of its
-- input and output prices (micro-diem per 1M tokens); NULL: the model has none (cached tokens cost the input price).
-- The price history records them too.
ALTER TABLE "models"
  ADD COLUMN "cache_read_micro_diem_per_mtok" BIGINT,
  ADD COLUMN "cache_write_micro_diem_per_mtok" BIGINT;
ALTER TABLE "model_prices"
  ADD COLUMN "cache_read_micro_diem_per_mtok" BIGINT,
  ADD COLUMN "cache_write_micro_diem_per_mtok" BIGINT;

-- An offer declares whether its upstream caches prompt prefixes, and the least time it keeps one (seconds): svc
-- counts a prefix it sent to that offer within that time as cached whatever the upstream claims.
ALTER TABLE "offers"
  ADD COLUMN "caches_prompts" BOOLEAN NOT NULL DEFAULT false,
  ADD COLUMN "cache_retention_seconds" INTEGER NOT NULL DEFAULT 300;

-- The hold snapshots the cache-read price it will bill cached tokens at: NULL when the offer does not cache (or the
-- model has no cache price), and then no token is billed as cached.
ALTER TABLE "holds" ADD COLUMN "cache_read_micro_diem_per_mtok" BIGINT;

-- What a completion billed as cached (within prompt_tokens) and what the upstream claimed (NULL: nothing claimed).
ALTER TABLE "completions"
  ADD COLUMN "cached_tokens" INTEGER,
  ADD COLUMN "claimed_cached_tokens" INTEGER;

-- The prefixes svc forwarded to each caching offer (lib/router/prompt-prefixes.ts): one row per prefix hash and
-- offer, with when it was last sent. The reservation reads them by hash (its primary key's first column), the clear
-- writes them, the sweeper deletes those past their offer's retention.
CREATE TABLE "prompt_prefixes" (
  "hash" TEXT NOT NULL,
  "offer_id" UUID NOT NULL,
  "sent_at" TIMESTAMPTZ(3) NOT NULL,
  "expires_at" TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT "prompt_prefixes_pkey" PRIMARY KEY ("hash", "offer_id")
);
CREATE INDEX "prompt_prefixes_expires_at_idx" ON "prompt_prefixes"("expires_at");
ALTER TABLE "prompt_prefixes" ADD CONSTRAINT "prompt_prefixes_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The clear item carries the upstream's cached-token claim, svc's own figure of the prefix it sent within the offer's
-- retention, and the prefix hashes to record (space-separated; NULL: none).
ALTER TYPE "svc_clear_item"
  ADD ATTRIBUTE "claimed_cached_tokens" bigint,
  ADD ATTRIBUTE "sent_cached_tokens" bigint,
  ADD ATTRIBUTE "prefix_hashes" text;

-- New signatures: the metered charge takes the cached tokens and their price, the reservation each item's prefix
-- hashes, the clear answers the cached tokens it billed (their files install the new ones after the migrations).
DROP FUNCTION IF EXISTS "svc_metered_charge"(bigint, bigint, bigint, bigint, integer, bigint, bigint);
DROP FUNCTION IF EXISTS "svc_reserve_batch"(text[], text[], integer[], integer[], integer[], boolean[], boolean[], boolean[],
  jsonb[], integer, timestamptz, timestamptz);
DROP FUNCTION IF EXISTS "svc_clear_batch"(svc_clear_item[], integer, timestamptz, integer);
