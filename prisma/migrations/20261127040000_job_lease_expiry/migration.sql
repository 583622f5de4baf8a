-- A job lease holds its own expiry: the instance that claims a job's run keeps it until the end of the tick window
-- it claimed, by its own interval. Before, the row held a tick number computed from the claimer's interval, so an
-- instance with a shorter interval (JOBS_INTERVAL_MS, or a rolling deploy that changes one) moved it past what the
-- other instances could ever claim, and no job ran fleet-wide. Now any instance may claim once the window has passed,
-- whatever the intervals, and a lease never blocks the others for longer than the claimer's own interval.
ALTER TABLE "job_leases" ADD COLUMN "expires_at" TIMESTAMPTZ(3);
-- Rows left by the old scheme are claimable at once (a tick far in the future blocked them).
UPDATE "job_leases" SET "expires_at" = "acquired_at";
ALTER TABLE "job_leases" ALTER COLUMN "expires_at" SET NOT NULL;
-- An instance still on the previous code inserts rows without it: such a row is claimable at once.
ALTER TABLE "job_leases" ALTER COLUMN "expires_at" SET DEFAULT CURRENT_TIMESTAMP;
-- The tick is now only informational (the claimer's tick number by its own interval); instances still running the
-- previous code during a rolling deploy keep writing it, and their claims stay once per tick among themselves.
