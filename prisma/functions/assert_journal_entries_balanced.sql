-- Every journal entry's lines sum to zero: a statement-level check over the statement's own new lines (an entry's
-- lines are written together in one statement and are append-only, so this is the whole entry; see
-- 20261125010000_journal_balance_check_on_new_lines). It fails the statement rather than the COMMIT.
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
