-- The platform fee sub-account of a shard (0..15; sub-account 0 is the original platform account): the fee of a
-- clear batch goes to one of 16, so no single row is locked by every clear.
CREATE OR REPLACE FUNCTION "svc_platform_shard"(p_shard integer) RETURNS uuid
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_shard % 16 = 0 THEN '00000000-0000-4000-8000-000000000001'::uuid
              ELSE ('00000000-0000-4000-8000-0000000001' || lpad(to_hex(p_shard % 16), 2, '0'))::uuid END
$$;
