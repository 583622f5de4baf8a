-- The hot path's functions look every row up by key, so an index scan is always the right plan for them; but a
-- plan is made once per connection (svc_clear_batch forces generic plans; plpgsql switches the others to generic
-- plans after five calls), and a connection that makes it while the tables are nearly empty (a fresh deploy, the
-- bench, the first minute of a new instance) gets sequential scans (of holds, ledger accounts, keys, offer days and
-- offers) and keeps them until autovacuum's next ANALYZE invalidates the plans. Measured with auto_explain on a
-- fresh bench database: every statement of svc_clear_batch scanned its tables sequentially, so each clear got
-- slower with every hold. With sequential scans priced out, the plans use the keys' indexes from the first call
-- whatever the statistics say. (A CREATE OR REPLACE of these functions drops this setting: restate it there;
-- tests/integration/clear-batch.test.ts checks it.)
ALTER FUNCTION "svc_reserve_batch"(text[], text[], integer[], integer[], integer[], boolean[], boolean[], boolean[], integer, timestamptz, timestamptz)
  SET enable_seqscan = off;
ALTER FUNCTION "svc_clear_batch"(uuid[], text[], integer[], integer[], boolean[], integer[], bigint[], integer[], integer[], boolean[], integer, timestamptz, integer)
  SET enable_seqscan = off;
ALTER FUNCTION "svc_release_hold"(uuid, timestamptz)
  SET enable_seqscan = off;
