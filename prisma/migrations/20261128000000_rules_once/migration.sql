-- Each rule once (issue 26). Hand-written.
--
-- From here on the functions live in prisma/functions/, one file per function, and a migration never restates one:
-- after the migrations, every deploy installs the files (server/sql-functions.ts, called by migrateDatabase in
-- server/migrate.ts: npm run db:deploy, npm run serve, the tests and the benches). That is where the new rule
-- functions come from (burn, charge, supplier share and fee, an offer's remaining capacity today, its health, the
-- features it serves, its routability and being on the book: IMMUTABLE LANGUAGE sql functions of one expression,
-- which the planner inlines), and the new svc_reserve_batch and svc_clear_batch that call them (same signatures as
-- 20261127010000_bounded_claims, so CREATE OR REPLACE takes them); svc_release_hold's SET enable_seqscan = off is
-- stated in its CREATE (it was an ALTER FUNCTION in 20261126000000_hot_path_index_plans).
--
-- This migration only drops svc_reserve_completion and svc_clear_completion, the single-row functions the batched
-- ones replaced: nothing calls them.

DROP FUNCTION "svc_reserve_completion"(uuid, uuid, text, integer, bigint, timestamptz, timestamptz, boolean, boolean, boolean);
DROP FUNCTION "svc_clear_completion"(uuid, text, integer, integer, boolean, integer, bigint, integer, timestamptz, integer, integer, boolean);
