-- Journal lines are append-only: a posted movement is corrected by a new entry, never edited.
CREATE OR REPLACE FUNCTION "refuse_journal_line_changes"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'journal lines are append-only' USING ERRCODE = 'check_violation';
END;
$$;
