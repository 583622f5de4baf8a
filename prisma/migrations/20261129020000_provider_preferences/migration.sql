-- Buyers choose by more than price (#23): default provider preferences (the `provider` object of a chat request, as
-- lib/market/provider-schemas.ts validates it) on a key and on an account, merged field by field under the request's own by
-- the reservation (svc_reserve_batch), which reads both rows already. NULL = none.
ALTER TABLE "api_keys" ADD COLUMN "provider_preferences" JSONB;
ALTER TABLE "accounts" ADD COLUMN "provider_preferences" JSONB;

-- The reservation takes each item's preferences and answers three more columns: the old signature goes (its file
-- installs the new one after migrations).
DROP FUNCTION IF EXISTS "svc_reserve_batch"(text[], text[], integer[], integer[], integer[], boolean[], boolean[], boolean[],
  integer, timestamptz, timestamptz);
