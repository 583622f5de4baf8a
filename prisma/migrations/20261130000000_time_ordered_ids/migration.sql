-- Time-ordered ids for the rows every completion writes (holds, clears, journal entries): a UUID version 7 (RFC 9562:
-- 48 bits of Unix milliseconds, then 74 random bits), so each new id lands at the right edge of its primary key and
-- of the unique indexes that refer to it, instead of on a random leaf page of an index as large as the history.
-- With random (version 4) ids, every leaf page of those indexes is written again between two checkpoints once the
-- history is large, and each first write after a checkpoint puts the whole 8 kB page into the WAL: the WAL a
-- completion writes, and the pages it needs in memory, grow with the history. Existing rows keep their ids.
CREATE OR REPLACE FUNCTION svc_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT encode(
    set_bit(
      set_bit(
        overlay(uuid_send(gen_random_uuid())
                PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                FROM 1 FOR 6),
        52, 1),
      53, 1),
    'hex')::uuid
$$;

ALTER TABLE "holds" ALTER COLUMN "id" SET DEFAULT svc_uuid_v7();
ALTER TABLE "clears" ALTER COLUMN "id" SET DEFAULT svc_uuid_v7();
ALTER TABLE "journal_entries" ALTER COLUMN "id" SET DEFAULT svc_uuid_v7();
