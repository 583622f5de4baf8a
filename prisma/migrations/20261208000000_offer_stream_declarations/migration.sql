-- What a supplier declares about streaming (issue 36): whether its upstream streams at all (when not, svc asks it
-- without streaming and sends the answer as a stream), and whether it bills a cancelled answer in full (then svc reads
-- a stream whose buyer hung up to its end, and bills what was generated).
ALTER TABLE "offers" ADD COLUMN "streams" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "offers" ADD COLUMN "bills_cancelled_in_full" BOOLEAN NOT NULL DEFAULT false;
