-- The balance check sums the statement's own new lines per entry instead of re-reading every line of the entries
-- they touch from journal_lines. The same rule: an entry's lines are written together in one statement and are
-- append-only (journal_lines_append_only), so an entry balances exactly when the lines of each statement that wrote
-- to it balance. Re-reading the table cost a clear batch an index (or, under a plan made while the table was empty,
-- a sequential) scan of journal_lines on every insert; the transition table holds only what this statement wrote.
CREATE OR REPLACE FUNCTION "assert_journal_entries_balanced"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  bad record;
BEGIN
  SELECT n."entry_id", SUM(n."amount_micros") AS total INTO bad
  FROM new_lines n
  GROUP BY n."entry_id"
  HAVING SUM(n."amount_micros") <> 0
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'journal entry % is unbalanced by % micros', bad."entry_id", bad.total
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;
