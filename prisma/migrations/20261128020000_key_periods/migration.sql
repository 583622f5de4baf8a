-- Budgets that reset (issue 22). Hand-written.
--
-- A key's spend limit may now reset: api_keys.limit_reset is 'daily', 'weekly' or 'monthly' (UTC; weeks Monday to
-- Sunday), or NULL for a lifetime limit as before. period_start and period_spent_micros are the key's counter for one
-- period: the spend reserved (and then charged) by holds reserved in the period starting at period_start. The
-- reservation (prisma/functions/svc_reserve_batch.sql) checks and raises it in the same conditional UPDATE that holds
-- the lifetime limit; a counter whose period has passed counts as 0 (svc_key_period_spent_micros), so nothing needs to
-- run at the reset. holds.key_period_start records the period a hold was reserved against: its clear or release gives
-- the unused part back only to that period's counter, and only while it is still the key's current one.
--
-- The functions (svc_key_period_start, svc_key_period_spent_micros, and the new svc_reserve_batch, svc_clear_batch
-- and svc_release_hold) are installed from prisma/functions/ after the migrations; their signatures are unchanged.

-- An enum, not a CHECK: Prisma 6.19's WASM schema engine panics introspecting CHECK constraints (see the init migration).
CREATE TYPE "key_limit_reset" AS ENUM ('daily', 'weekly', 'monthly');

ALTER TABLE "api_keys"
  ADD COLUMN "limit_reset" "key_limit_reset",
  ADD COLUMN "period_start" TIMESTAMPTZ(3),
  ADD COLUMN "period_spent_micros" BIGINT NOT NULL DEFAULT 0;

ALTER TABLE "holds" ADD COLUMN "key_period_start" TIMESTAMPTZ(3);
