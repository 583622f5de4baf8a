-- svc_offer_preference_miss takes the offer's streaming.bills_cancelled_in_full (provider.cancelled_billing: deny):
-- the old signature goes, prisma/functions/ installs the new one after the migrations.
DROP FUNCTION IF EXISTS "svc_offer_preference_miss"(jsonb, uuid, uuid, text, boolean, boolean, integer, bigint, bigint);
