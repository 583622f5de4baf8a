-- Autovacuum by row counts, not by table size, for the tables the completion path grows (a soak to 3M completions,
-- `npm run bench:http -- --soak`, README "The long run"). By default a table is vacuumed once 20% of it is dead or newly
-- inserted: as the history grows, that is ever rarer.
-- - holds: every completion inserts a hold and updates it once (active, then cleared or released), leaving one dead
--   row. At 2M holds the default waited for 400,000 dead rows, in the pages the next reservations and clears read.
--   Every 20,000 instead, whatever the size.
ALTER TABLE "holds" SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000);
-- - clears: append-only; an insert-driven vacuum sets the visibility map, without which the market's 24 h statistics
--   (an index-only scan of clears_created_at_covering_idx) read a heap page per recent clear: exactly the pages not
--   yet vacuumed. Every 50,000 inserts, whatever the size.
ALTER TABLE "clears" SET (autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 50000);
