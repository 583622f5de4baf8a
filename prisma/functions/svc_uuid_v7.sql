-- A time-ordered id (UUID version 7, RFC 9562: 48 bits of Unix milliseconds, then version, variant and 74 random
-- bits) for the rows every completion writes: holds (svc_reserve_batch), clears and journal entries
-- (svc_clear_batch). Each new id lands at the right edge of its primary key and of the unique indexes that refer to
-- it, instead of on a random leaf page of an index as large as the history: with random (version 4) ids every leaf
-- page is written again between two checkpoints once the history is large, and each first write after a checkpoint
-- puts the whole 8 kB page in the WAL (measured: 1,026 bytes of WAL per insert into a 3M-row UUID index right after a
-- checkpoint with random ids, 156 with these). Rows made elsewhere (Prisma, rarely) keep the columns' random default.
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
