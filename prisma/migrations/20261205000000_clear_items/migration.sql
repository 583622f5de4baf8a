-- Batch functions people can change (issue 35, item 3), and how a completion ended (for streaming, issue 36).
-- Hand-written.
--
-- svc_clear_batch takes its items as one array of svc_clear_item, a field per name, instead of parallel arrays (a new
-- field is one line here and one in lib/router/holds.ts clearItem, not an argument and a position in every caller),
-- and no longer takes a burn from its caller: every hold carries the list prices it was reserved at
-- (20261124000000_hot_path_batched), and a hold lives UPSTREAM_TIMEOUT_MS + 60 s before the sweeper releases it, so
-- none reserved before that migration is still active. svc_reserve_batch answers each item with one named record
-- (ord, outcome json) instead of 18 positional columns padded with NULLs. Both are new signatures (a new argument
-- type, a new result type): the old functions are dropped here (IF EXISTS: on a fresh database the functions are
-- installed only after the migrations) and the install step after the migrations (server/sql-functions.ts) creates
-- the new ones from prisma/functions/. An instance of the previous release still running during a rolling deploy can
-- neither reserve nor clear from here until it is replaced (its completions are answered 500 and not charged), as in
-- 20261202000000_reasoning_claims.
--
-- A completion records how it ended (end_reason: completed, client_cancelled, upstream_error, timeout) and whether
-- it was streamed; a non-streamed answer read whole is 'completed' and false, which every completion cleared before
-- this migration was. The four endings are an enum, not a CHECK: Prisma 6.19's WASM schema engine panics introspecting
-- CHECK constraints (see the init migration; checked again here: `migrate diff` crashed on one). The clear item carries
-- the ending as text and the clear refuses an item whose text is not one of the enum's labels (alone, as any item it
-- cannot take), before the insert's cast could fail the whole batch.

CREATE TYPE "svc_clear_item" AS (
  "hold_id" uuid,
  "completion_id" text,
  -- What is billed (within the hold: the clear caps it), and the reasoning tokens within completion_tokens.
  "prompt_tokens" bigint,
  "completion_tokens" bigint,
  "reasoning_tokens" bigint,
  -- The upstream sent no usage (our count is billed); its claim exceeded our count beyond the tolerance.
  "usage_estimated" boolean,
  "usage_disputed" boolean,
  -- What the upstream claimed (NULL: nothing claimed), of any size: stored clamped to the columns.
  "claimed_prompt_tokens" bigint,
  "claimed_completion_tokens" bigint,
  "claimed_reasoning_tokens" bigint,
  -- The upstream's latency (forward sent to answer read), and the request's own (arrival to this clear's submission).
  "latency_ms" bigint,
  "total_latency_ms" bigint,
  "finish_reason" text,
  "end_reason" text,
  "streamed" boolean
);

CREATE TYPE "completion_end" AS ENUM ('completed', 'client_cancelled', 'upstream_error', 'timeout');

ALTER TABLE "completions"
  ADD COLUMN "end_reason" "completion_end" NOT NULL DEFAULT 'completed',
  ADD COLUMN "streamed" BOOLEAN NOT NULL DEFAULT false;

DROP FUNCTION IF EXISTS "svc_clear_batch"(uuid[], text[], bigint[], bigint[], boolean[], bigint[], bigint[], bigint[], bigint[],
  boolean[], bigint[], text[], bigint[], bigint[], integer, timestamptz, integer);
DROP FUNCTION IF EXISTS "svc_reserve_batch"(text[], text[], integer[], integer[], integer[], boolean[], boolean[], boolean[],
  jsonb[], integer, timestamptz, timestamptz);
-- svc_metered_charge returns its one row as a table now, so that the clear's statement inlines it (see its file): a new
-- result type. Its callers read it in FROM, which is unchanged.
DROP FUNCTION IF EXISTS "svc_metered_charge"(bigint, bigint, bigint, bigint, integer, bigint, bigint);
