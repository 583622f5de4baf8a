-- Generations (issue 22). Hand-written.
--
-- Every answer states what it cost (usage.cost and usage.cost_details) and can be looked up afterwards by its id
-- (GET /v1/generations/{id}). The completion row keeps what the lookup shows and was not stored before: the
-- upstream's finish_reason and the request's total latency (latency_ms stays the upstream's: forward sent to answer
-- read). Both are null on completions cleared before this migration.
--
-- svc_clear_batch takes the two new arrays and returns the clear's supplier share and fee beside its charge, so a
-- new signature and result type: CREATE OR REPLACE cannot change those, so the old one is dropped here and the
-- install step after the migrations (server/sql-functions.ts) creates the new one from prisma/functions/. An
-- instance of the previous release still running during a rolling deploy cannot clear from here until it is
-- replaced (its completions are answered 500 and not charged: the clear fails and the hold is released).

ALTER TABLE "completions" ADD COLUMN "finish_reason" TEXT, ADD COLUMN "total_latency_ms" INTEGER;

-- Since 20261127010000_bounded_claims the clear stored a missing claim as 2147483647 on both sides (LEAST ignores
-- NULL): the completions without a claim are exactly those whose usage was estimated (svc counted), so their claims
-- go back to NULL, as the columns document. (One pass over completions; the fixed clear writes NULL from here on.)
UPDATE "completions" SET "claimed_prompt_tokens" = NULL, "claimed_completion_tokens" = NULL
WHERE "usage_estimated" AND "claimed_prompt_tokens" = 2147483647 AND "claimed_completion_tokens" = 2147483647;

DROP FUNCTION "svc_clear_batch"(uuid[], text[], bigint[], bigint[], boolean[], bigint[], bigint[], bigint[], bigint[], boolean[], integer, timestamptz, integer);
