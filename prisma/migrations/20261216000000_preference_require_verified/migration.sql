-- svc_offer_preference_miss takes the offer's probe_status (provider.require_verified: true, #37): the old signature
-- goes, prisma/functions/ installs the new one after the migrations.
DROP FUNCTION IF EXISTS "svc_offer_preference_miss"(jsonb, uuid, uuid, text, boolean, boolean, boolean, integer, bigint, bigint);
