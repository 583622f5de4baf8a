-- Reasoning billed only as far as it is plausible (issue 34, finding 2). Hand-written.
--
-- A completion keeps the reasoning tokens its upstream claimed beside those billed (lib/upstream/metering.ts bounds
-- billed hidden reasoning by the request's budget and by what the answer makes plausible), so its generation record
-- and cost_details show both. Both are NULL on completions cleared before this migration (the claim was not kept).
--
-- svc_clear_batch takes the two new arrays, so a new signature: the old function is dropped here (IF EXISTS: on a fresh
-- database the functions are installed only after the migrations) and the install step after the migrations
-- (server/sql-functions.ts) creates the new one from prisma/functions/. An instance of the previous
-- release still running during a rolling deploy cannot clear from here until it is replaced (its completions are
-- answered 500 and not charged: the clear fails and the hold is released), as in 20261128010000_generations.

ALTER TABLE "completions" ADD COLUMN "claimed_reasoning_tokens" INTEGER, ADD COLUMN "reasoning_tokens" INTEGER;

DROP FUNCTION IF EXISTS "svc_clear_batch"(uuid[], text[], bigint[], bigint[], boolean[], bigint[], bigint[], bigint[], bigint[],
  boolean[], bigint[], text[], integer, timestamptz, integer);
