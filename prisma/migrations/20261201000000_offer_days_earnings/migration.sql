-- An offer's earnings and clear count as running sums on its days (svc_clear_batch adds each clear's supplier share
-- in the update that already counts it), so the supplier's offers list sums one row per offer and day instead of
-- every clear the offer ever made (470 ms per list at 3M clears, and growing with the history).
ALTER TABLE "offer_days" ADD COLUMN "earned_micros" BIGINT NOT NULL DEFAULT 0;

-- The history so far, recounted from the clears on the day each clear's hold was reserved, the day svc_clear_batch
-- counts a clear on (an early backfill, 20261123000000, counted past clears on the day they were made): every day
-- zeroed first, so a clear is counted once, on one day.
UPDATE "offer_days" SET "clears" = 0, "earned_micros" = 0;
INSERT INTO "offer_days" ("offer_id", "day", "clears", "earned_micros")
SELECT h."offer_id", h."day", COUNT(*)::integer, SUM(c."supplier_micros")::bigint
FROM "clears" c
JOIN "completions" co ON co."id" = c."completion_id"
JOIN "holds" h ON h."id" = co."hold_id"
GROUP BY h."offer_id", h."day"
ON CONFLICT ("offer_id", "day") DO UPDATE SET "clears" = EXCLUDED."clears", "earned_micros" = EXCLUDED."earned_micros";
