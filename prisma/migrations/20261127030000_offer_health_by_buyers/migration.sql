-- Offer health weighs failures across buyers (lib/supply/offer-health.ts states the rule). The current failure
-- streak (failures with no served completion between them; a clear resets consecutive_failures to 0, which starts
-- the next streak) keeps, in the offer's row:
--   failure_streak_started_at  when its first failure was reported;
--   failure_streak_buyers      the distinct buyer accounts whose failures it holds, at most 3 (a fixed-size set:
--                              the rule needs no more, so storage per offer is bounded whatever the traffic; the
--                              one statement that writes it keeps the bound, as a CHECK would make the schema
--                              engine panic: see the init migration);
--   failure_streak_cooldowns   how many cooldowns it has earned (each probe that fails doubles the next).
-- Stale values of a streak that ended are never read: the next failure starts a fresh one.
ALTER TABLE "offers"
  ADD COLUMN "failure_streak_started_at" TIMESTAMPTZ(3),
  ADD COLUMN "failure_streak_buyers" UUID[] NOT NULL DEFAULT '{}',
  ADD COLUMN "failure_streak_cooldowns" INTEGER NOT NULL DEFAULT 0;
