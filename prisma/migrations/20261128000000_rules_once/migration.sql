-- Each rule once (issue 26). Hand-written header; the functions below are generated from prisma/functions/ by
-- npm run db:function-migration, the files being the SQL that runs (tests/unit/sql-functions.test.ts checks this text
-- against them, tests/integration/sql-functions.test.ts the database's definitions).
--
-- * The money and routing rules become small IMMUTABLE LANGUAGE sql functions, each a single expression, which the
--   planner inlines into the statements that call them: burn, charge, supplier share and fee, an offer's remaining
--   capacity today, its health, the features it serves, its routability and being on the book. svc_reserve_batch and
--   svc_clear_batch call them instead of restating the arithmetic, and so do the book, pool and no-offer queries
--   (lib/market/book.ts, lib/market/pool.ts, lib/router/no-offer.ts); lib/money.ts and lib/supply are their
--   TypeScript mirrors, held to them by tests/integration/money-rules.test.ts. Results are unchanged; the clear meters
--   its burn exactly (numeric, as the reservation already did) before capping it at the hold's.
-- * Every other function installed today is re-created from its file unchanged, so the newest migration defining
--   each is this one; svc_release_hold now states SET enable_seqscan = off in its CREATE (it was an ALTER FUNCTION in
--   20261126000000_hot_path_index_plans), like the reserve and the clear.
-- * svc_reserve_completion and svc_clear_completion, the single-row functions the batched ones replaced, are dropped:
--   nothing calls them.

DROP FUNCTION "svc_reserve_completion"(uuid, uuid, text, integer, bigint, timestamptz, timestamptz, boolean, boolean, boolean);
DROP FUNCTION "svc_clear_completion"(uuid, text, integer, integer, boolean, integer, bigint, integer, timestamptz, integer, integer, boolean);

-- Capacity burn in micro-diem: tokens x list price (micro-diem per 1M tokens) / 1M, rounded up so capacity is never
-- under-counted. Exact (numeric, for non-negative counts and prices): the caller says what a burn beyond bigint means
-- (svc_reserve_batch refuses the item, svc_clear_batch caps the burn at the hold's). Mirror: lib/money.ts burnMicroDiem.
CREATE OR REPLACE FUNCTION "svc_burn_micro_diem"(
  p_prompt_tokens bigint,
  p_completion_tokens bigint,
  p_input_micro_diem_per_mtok bigint,
  p_output_micro_diem_per_mtok bigint
) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT div(p_prompt_tokens::numeric * p_input_micro_diem_per_mtok
             + p_completion_tokens::numeric * p_output_micro_diem_per_mtok + 999999, 1000000)
$$;

-- A charge in micro-USDC: ceil(burn x price in cents per diem / 100), so one diem at 100 cents costs one USDC. In
-- bigint: raises "bigint out of range" when burn x price + 99 does not fit (svc_reserve_batch refuses a burn whose
-- charge at the highest price could not fit before it gets here). Mirror: lib/money.ts chargeMicros.
CREATE OR REPLACE FUNCTION "svc_charge_micros"(p_burn_micro_diem bigint, p_price_cents integer) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT (p_burn_micro_diem * p_price_cents + 99) / 100
$$;

-- The supplier's share of a charge: floor(charge x (10000 - fee) / 10000), the fee in basis points; the platform gets
-- the rest (svc_fee_micros), so the two always add up to the charge. In bigint: raises "bigint out of range" when
-- charge x (10000 - fee) does not fit. Mirror: lib/money.ts splitCharge.
CREATE OR REPLACE FUNCTION "svc_supplier_micros"(p_charge_micros bigint, p_fee_bps integer) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT p_charge_micros * (10000 - p_fee_bps) / 10000
$$;

-- The platform's fee on a charge: what the supplier's share (svc_supplier_micros) leaves of it. Mirror: lib/money.ts
-- splitCharge. The charge appears twice in the body, so the planner inlines a call only when its charge argument is
-- cheap to evaluate (a column, or svc_clear_batch's LEAST of the charge and the hold's amount; checked in
-- tests/integration/sql-functions.test.ts); pass a computed charge through a column or LATERAL otherwise.
CREATE OR REPLACE FUNCTION "svc_fee_micros"(p_charge_micros bigint, p_fee_bps integer) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT p_charge_micros - svc_supplier_micros(p_charge_micros, p_fee_bps)
$$;

-- What is left of an offer's capacity today: daily capacity - burned - held, from today's offer_days row (NULL burned
-- and held: no row yet, nothing used). Negative when the capacity was cut below today's use: nothing fits, and the
-- views show zero (GREATEST(.., 0); mirror: lib/supply/capacity.ts remainingMicroDiem).
CREATE OR REPLACE FUNCTION "svc_offer_remaining_micro_diem"(
  p_daily_capacity_micro_diem bigint,
  p_burned_micro_diem bigint,
  p_held_micro_diem bigint
) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT p_daily_capacity_micro_diem - COALESCE(p_burned_micro_diem, 0) - COALESCE(p_held_micro_diem, 0)
$$;

-- An offer is healthy at p_now unless it is cooling down after upstream failures (lib/supply/offer-health.ts states
-- when it cools down and for how long). Mirror: lib/supply/offer-health.ts isHealthy.
CREATE OR REPLACE FUNCTION "svc_offer_healthy"(p_unhealthy_until timestamptz, p_now timestamptz) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT p_unhealthy_until IS NULL OR p_unhealthy_until <= p_now
$$;

-- An offer serves a request's features for a model when its offer_models row supports every feature the request
-- uses (tools, json_schema structured outputs, image inputs).
CREATE OR REPLACE FUNCTION "svc_offer_model_serves"(
  p_supports_tools boolean,
  p_supports_json_schema boolean,
  p_supports_vision boolean,
  p_tools boolean,
  p_json_schema boolean,
  p_vision boolean
) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT (NOT p_tools OR p_supports_tools) AND (NOT p_json_schema OR p_supports_json_schema)
     AND (NOT p_vision OR p_supports_vision)
$$;

-- An offer can take a request now: it is active, healthy at p_now, priced at or below the buyer's max, and has the
-- request's burn left today (svc_offer_model_serves says whether it serves the request's features). The reservation
-- routes by it (svc_reserve_batch), and the book is what it admits at any price for the smallest burn
-- (svc_offer_on_book).
CREATE OR REPLACE FUNCTION "svc_offer_routable"(
  p_status offer_status,
  p_unhealthy_until timestamptz,
  p_price_cents integer,
  p_daily_capacity_micro_diem bigint,
  p_burned_micro_diem bigint,
  p_held_micro_diem bigint,
  p_max_price_cents integer,
  p_burn_micro_diem bigint,
  p_now timestamptz
) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT p_status = 'active' AND svc_offer_healthy(p_unhealthy_until, p_now) AND p_price_cents <= p_max_price_cents
     AND svc_offer_remaining_micro_diem(p_daily_capacity_micro_diem, p_burned_micro_diem, p_held_micro_diem) >= p_burn_micro_diem
$$;

-- On the book: routable at any price for the smallest burn (one micro-diem), i.e. active, healthy at p_now and with
-- capacity left today. Every market view (book, depth, pool, the no-offer explanation) counts what this admits.
CREATE OR REPLACE FUNCTION "svc_offer_on_book"(
  p_status offer_status,
  p_unhealthy_until timestamptz,
  p_daily_capacity_micro_diem bigint,
  p_burned_micro_diem bigint,
  p_held_micro_diem bigint,
  p_now timestamptz
) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT svc_offer_routable(p_status, p_unhealthy_until, 0, p_daily_capacity_micro_diem, p_burned_micro_diem,
                            p_held_micro_diem, 0, 1, p_now)
$$;

-- The platform fee sub-account of a shard (0..15; sub-account 0 is the original platform account): the fee of a
-- clear batch goes to one of 16, so no single row is locked by every clear.
CREATE OR REPLACE FUNCTION "svc_platform_shard"(p_shard integer) RETURNS uuid
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_shard % 16 = 0 THEN '00000000-0000-4000-8000-000000000001'::uuid
              ELSE ('00000000-0000-4000-8000-0000000001' || lpad(to_hex(p_shard % 16), 2, '0'))::uuid END
$$;

-- The reservation, before forwarding (lib/router/holds.ts reserveWithKey, through group commit): per item, the key
-- authenticated from its row (a revoked or expired key is refused at once, whatever a process cached), the max price
-- resolved (request, key cap, account default, platform default), the model's list prices read, and the worst case
-- reserved on the cheapest routable offer that serves the request's features (svc_offer_routable,
-- svc_offer_model_serves): its capacity, the buyer's balance and the key's spend, with the prices snapshotted onto
-- the hold. Each item gets its own outcome and none raises: an item it cannot take (a missing value, a negative
-- count, a burn whose charge would not fit a bigint) is 'rejected' alone.
-- status: 'ok' | 'invalid_api_key' | 'max_price_above_key_cap' | 'model_not_found' | 'insufficient_balance'
--       | 'spend_limit_exceeded' | 'no_offer' | 'rejected'. ord is the 1-based position in the arrays.
-- SET enable_seqscan = off: every row is looked up by key, and a plan made while the tables were nearly empty must
-- not scan them (20261126000000_hot_path_index_plans).
CREATE OR REPLACE FUNCTION "svc_reserve_batch"(
  p_key_hashes text[],
  p_model_ids text[],
  p_requested_max_cents integer[],
  p_prompt_tokens integer[],
  p_output_tokens integer[],
  p_tools boolean[],
  p_json_schema boolean[],
  p_vision boolean[],
  p_default_max_cents integer,
  p_now timestamptz,
  p_expires_at timestamptz
) RETURNS TABLE (
  ord integer,
  status text,
  api_key_id uuid,
  account_id uuid,
  key_max_price_cents integer,
  spend_limit_micros bigint,
  max_price_cents integer,
  burn_micro_diem bigint,
  hold_id uuid,
  offer_id uuid,
  price_cents integer,
  amount_micros bigint,
  upstream_base_url text,
  upstream_key_ciphertext text,
  upstream_model text
)
LANGUAGE plpgsql
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  v_day date := (p_now AT TIME ZONE 'UTC')::date;
  v_key record;
  v_model record;
  v_offer record;
  v_max integer;
  v_burn bigint;
  v_burn_exact numeric;
  v_charge bigint;
  v_hold uuid;
  v_done boolean;
  i integer;
BEGIN
  -- The reservation's commit does not wait for its WAL flush (atomicity and isolation are unchanged: other
  -- transactions see it at once, so nothing can overspend). Money moves only in the clear, whose commit is
  -- synchronous and flushes the WAL in order, reservation included: a clear that returned is durable with its
  -- hold. A PostgreSQL crash can lose only reservations not yet cleared, and their clear then fails (nothing
  -- charged, nothing created). This takes one fsync off the path before forwarding.
  PERFORM set_config('synchronous_commit', 'off', true);
  -- Rows in a fixed order (model, then key): concurrent batches take their first shared locks in the same order.
  FOR i IN SELECT u.ord::integer FROM unnest(p_model_ids, p_key_hashes) WITH ORDINALITY AS u(model, key, ord) ORDER BY u.model, u.key, u.ord LOOP
    -- An item the caller should never send (a missing value, a negative count) is refused on its own.
    IF p_key_hashes[i] IS NULL OR p_model_ids[i] IS NULL
       OR p_prompt_tokens[i] IS NULL OR p_prompt_tokens[i] < 0 OR p_output_tokens[i] IS NULL OR p_output_tokens[i] < 0
       OR p_requested_max_cents[i] < 1 OR p_tools[i] IS NULL OR p_json_schema[i] IS NULL OR p_vision[i] IS NULL THEN
      RETURN QUERY SELECT i, 'rejected'::text, NULL::uuid, NULL::uuid, NULL::integer, NULL::bigint, NULL::integer,
        NULL::bigint, NULL::uuid, NULL::uuid, NULL::integer, NULL::bigint, NULL::text, NULL::text, NULL::text;
      CONTINUE;
    END IF;
    SELECT k."id", k."account_id", k."max_price_cents", k."spend_limit_micros", a."default_max_price_cents"
    INTO v_key
    FROM "api_keys" k JOIN "accounts" a ON a."id" = k."account_id"
    WHERE k."key_hash" = p_key_hashes[i] AND k."revoked_at" IS NULL AND (k."expires_at" IS NULL OR k."expires_at" > p_now);
    IF NOT FOUND THEN
      RETURN QUERY SELECT i, 'invalid_api_key'::text, NULL::uuid, NULL::uuid, NULL::integer, NULL::bigint, NULL::integer,
        NULL::bigint, NULL::uuid, NULL::uuid, NULL::integer, NULL::bigint, NULL::text, NULL::text, NULL::text;
      CONTINUE;
    END IF;
    IF p_requested_max_cents[i] IS NOT NULL AND v_key."max_price_cents" IS NOT NULL
       AND p_requested_max_cents[i] > v_key."max_price_cents" THEN
      RETURN QUERY SELECT i, 'max_price_above_key_cap'::text, v_key."id", v_key."account_id", v_key."max_price_cents",
        v_key."spend_limit_micros", NULL::integer, NULL::bigint, NULL::uuid, NULL::uuid, NULL::integer, NULL::bigint,
        NULL::text, NULL::text, NULL::text;
      CONTINUE;
    END IF;
    v_max := COALESCE(p_requested_max_cents[i], v_key."max_price_cents", v_key."default_max_price_cents", p_default_max_cents);

    SELECT m."input_micro_diem_per_mtok" AS input, m."output_micro_diem_per_mtok" AS output INTO v_model
    FROM "models" m WHERE m."id" = p_model_ids[i] AND m."active";
    IF NOT FOUND THEN
      RETURN QUERY SELECT i, 'model_not_found'::text, v_key."id", v_key."account_id", v_key."max_price_cents",
        v_key."spend_limit_micros", v_max, NULL::bigint, NULL::uuid, NULL::uuid, NULL::integer, NULL::bigint,
        NULL::text, NULL::text, NULL::text;
      CONTINUE;
    END IF;
    -- The burn, exactly: one whose charge (at up to 10,000 cents per diem) would not fit a bigint refuses this item
    -- alone, never the statement.
    v_burn_exact := svc_burn_micro_diem(p_prompt_tokens[i], p_output_tokens[i], v_model.input, v_model.output);
    IF v_burn_exact > 922337203685477 THEN
      RETURN QUERY SELECT i, 'rejected'::text, v_key."id", v_key."account_id", v_key."max_price_cents",
        v_key."spend_limit_micros", v_max, NULL::bigint, NULL::uuid, NULL::uuid, NULL::integer, NULL::bigint,
        NULL::text, NULL::text, NULL::text;
      CONTINUE;
    END IF;
    v_burn := v_burn_exact::bigint;

    v_done := false;
    FOR v_offer IN
      SELECT o."id", o."price_cents", o."daily_capacity_micro_diem",
             o."upstream_base_url", o."upstream_key_ciphertext", om."upstream_model"
      FROM "offers" o
      JOIN "offer_models" om ON om."offer_id" = o."id" AND om."model_id" = p_model_ids[i]
        AND svc_offer_model_serves(om."supports_tools", om."supports_json_schema", om."supports_vision",
                                   p_tools[i], p_json_schema[i], p_vision[i])
      LEFT JOIN "offer_days" d ON d."offer_id" = o."id" AND d."day" = v_day
      WHERE svc_offer_routable(o."status", o."unhealthy_until", o."price_cents", o."daily_capacity_micro_diem",
                               d."burned_micro_diem", d."held_micro_diem", v_max, v_burn, p_now)
      ORDER BY o."price_cents", o."created_at", o."id"
    LOOP
      INSERT INTO "offer_days" ("offer_id", "day") VALUES (v_offer."id", v_day) ON CONFLICT DO NOTHING;
      UPDATE "offer_days" SET "held_micro_diem" = "held_micro_diem" + v_burn
      WHERE "offer_id" = v_offer."id" AND "day" = v_day
        AND svc_offer_remaining_micro_diem(v_offer."daily_capacity_micro_diem", "burned_micro_diem", "held_micro_diem") >= v_burn;
      IF NOT FOUND THEN
        CONTINUE;
      END IF;
      v_done := true;
      v_charge := svc_charge_micros(v_burn, v_offer."price_cents");

      UPDATE "ledger_accounts" SET "held_micros" = "held_micros" + v_charge
      WHERE "kind" = 'buyer' AND "owner_id" = v_key."account_id" AND "balance_micros" - "held_micros" >= v_charge;
      IF NOT FOUND THEN
        UPDATE "offer_days" SET "held_micro_diem" = "held_micro_diem" - v_burn WHERE "offer_id" = v_offer."id" AND "day" = v_day;
        RETURN QUERY SELECT i, 'insufficient_balance'::text, v_key."id", v_key."account_id", v_key."max_price_cents",
          v_key."spend_limit_micros", v_max, v_burn, NULL::uuid, v_offer."id", v_offer."price_cents", v_charge,
          NULL::text, NULL::text, NULL::text;
        EXIT;
      END IF;

      UPDATE "api_keys" SET "spent_micros" = "spent_micros" + v_charge
      WHERE "id" = v_key."id" AND ("spend_limit_micros" IS NULL OR "spent_micros" + v_charge <= "spend_limit_micros");
      IF NOT FOUND THEN
        UPDATE "offer_days" SET "held_micro_diem" = "held_micro_diem" - v_burn WHERE "offer_id" = v_offer."id" AND "day" = v_day;
        UPDATE "ledger_accounts" SET "held_micros" = "held_micros" - v_charge
        WHERE "kind" = 'buyer' AND "owner_id" = v_key."account_id";
        RETURN QUERY SELECT i, 'spend_limit_exceeded'::text, v_key."id", v_key."account_id", v_key."max_price_cents",
          v_key."spend_limit_micros", v_max, v_burn, NULL::uuid, v_offer."id", v_offer."price_cents", v_charge,
          NULL::text, NULL::text, NULL::text;
        EXIT;
      END IF;

      INSERT INTO "holds" ("account_id", "api_key_id", "offer_id", "model_id", "day", "price_cents",
                           "amount_micros", "burn_micro_diem", "expires_at", "created_at",
                           "input_micro_diem_per_mtok", "output_micro_diem_per_mtok")
      VALUES (v_key."account_id", v_key."id", v_offer."id", p_model_ids[i], v_day, v_offer."price_cents",
              v_charge, v_burn, p_expires_at, p_now, v_model.input, v_model.output)
      RETURNING "id" INTO v_hold;

      RETURN QUERY SELECT i, 'ok'::text, v_key."id", v_key."account_id", v_key."max_price_cents",
        v_key."spend_limit_micros", v_max, v_burn, v_hold, v_offer."id", v_offer."price_cents", v_charge,
        v_offer."upstream_base_url", v_offer."upstream_key_ciphertext", v_offer."upstream_model";
      EXIT;
    END LOOP;

    IF NOT v_done THEN
      RETURN QUERY SELECT i, 'no_offer'::text, v_key."id", v_key."account_id", v_key."max_price_cents",
        v_key."spend_limit_micros", v_max, v_burn, NULL::uuid, NULL::uuid, NULL::integer, NULL::bigint,
        NULL::text, NULL::text, NULL::text;
    END IF;
  END LOOP;
END;
$$;

-- The clear, after forwarding (lib/router/holds.ts clearCompletion, through group commit), set-based: a fixed number
-- of statements per batch whatever its size (20261125000000_clear_set_based). Each active hold is metered at the
-- prices it snapshotted (svc_burn_micro_diem, capped at the reserved burn; svc_charge_micros, capped at the reserved
-- amount), split between supplier and platform (svc_supplier_micros, svc_fee_micros), and cleared: the offer day's
-- burn, the buyer's balance, the key's spend and the earnings are each written once with the sums of the batch, the
-- records (completion, clear, journal entry and its lines, balanced per clear) inserted by one statement each, and a
-- served offer's failure streak ended. Tables are locked once each, in one order: holds, offer days, balances, keys,
-- earnings, offers. An item that cannot be cleared (a count out of range, a completion id missing, used or repeated)
-- is 'rejected' alone and never fails the batch.
-- status: 'ok' | 'not_active' (the hold is not active, or not found: nothing done) | 'rejected' (the item itself
-- cannot be cleared: nothing done; its hold stays active for the caller to release).
-- SET enable_seqscan = off: see svc_reserve_batch.
CREATE OR REPLACE FUNCTION "svc_clear_batch"(
  p_hold_ids uuid[],
  p_completion_ids text[],
  p_prompt_tokens bigint[],
  p_completion_tokens bigint[],
  p_usage_estimated boolean[],
  p_latency_ms bigint[],
  p_burn_micro_diem bigint[],
  p_claimed_prompt_tokens bigint[],
  p_claimed_completion_tokens bigint[],
  p_usage_disputed boolean[],
  p_fee_bps integer,
  p_now timestamptz,
  p_platform_shard integer
) RETURNS TABLE (
  ord integer,
  status text,
  charge_micros bigint,
  burn_micro_diem bigint,
  price_cents integer,
  balance_micros bigint
)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  v_platform uuid := svc_platform_shard(p_platform_shard);
  v_ok boolean[];             -- per input position: the item can be cleared at all (else 'rejected')
  -- One element per hold cleared.
  c_n integer[];              -- the item's position in the input arrays (its ord)
  c_hold uuid[];
  c_account uuid[];           -- the buyer (accounts.id)
  c_key uuid[];
  c_offer uuid[];
  c_day date[];
  c_model text[];
  c_price integer[];
  c_amount bigint[];          -- the hold's reserved charge
  c_reserved_burn bigint[];   -- the hold's reserved burn
  c_burn bigint[];
  c_charge bigint[];
  c_share bigint[];
  c_fee bigint[];
  c_supplier uuid[];          -- the offer's supplier's ledger account (NULL until created)
  -- One element per buyer: its ledger account and its balance after this batch.
  b_owner uuid[];
  b_account uuid[];
  b_balance bigint[];
BEGIN
  -- 0. Items that cannot be cleared whatever their hold (a count out of range or missing, a completion id missing,
  --    already used or given earlier in this batch) are refused one by one, so that they never fail the statement
  --    and with it the rest of the batch. Claims are the supplier's numbers: any size is taken, and stored clamped.
  SELECT array_agg(v.ok ORDER BY v.n) INTO v_ok
  FROM (
    SELECT i.n, COALESCE(
             p_completion_ids[i.n] IS NOT NULL
             AND p_prompt_tokens[i.n] BETWEEN 0 AND 2147483647
             AND p_completion_tokens[i.n] BETWEEN 0 AND 2147483647
             AND p_latency_ms[i.n] BETWEEN 0 AND 2147483647
             AND COALESCE(p_claimed_prompt_tokens[i.n], 0) >= 0
             AND COALESCE(p_claimed_completion_tokens[i.n], 0) >= 0
             AND COALESCE(p_burn_micro_diem[i.n], 0) >= 0
             AND p_usage_estimated[i.n] IS NOT NULL AND p_usage_disputed[i.n] IS NOT NULL
             AND row_number() OVER (PARTITION BY p_completion_ids[i.n] ORDER BY i.n) = 1
             AND NOT EXISTS (SELECT 1 FROM "completions" c WHERE c."id" = p_completion_ids[i.n]),
           false) AS ok
    FROM unnest(p_hold_ids) WITH ORDINALITY AS i(id, n)
  ) v;

  -- 1. Lock the batch's holds in id order (a hold id given twice counts at its first position), keep the active
  --    ones and meter them. The status is compared as text so that the holds are looked up by id: a status index
  --    scan would read every active hold. It is checked on the locked (latest) row.
  SELECT array_agg(m.n), array_agg(m.id), array_agg(m.account_id), array_agg(m.api_key_id), array_agg(m.offer_id),
         array_agg(m.day), array_agg(m.model_id), array_agg(m.price), array_agg(m.amount), array_agg(m.reserved_burn),
         array_agg(m.burn), array_agg(c.charge), array_agg(s.share), array_agg(s.fee), array_agg(sa."id")
  INTO c_n, c_hold, c_account, c_key, c_offer, c_day, c_model, c_price, c_amount, c_reserved_burn,
       c_burn, c_charge, c_share, c_fee, c_supplier
  FROM (
    SELECT u.n, h."id", h."account_id", h."api_key_id", h."offer_id", h."day", h."model_id",
           h."price_cents" AS price, h."amount_micros" AS amount, h."burn_micro_diem" AS reserved_burn,
           LEAST(CASE WHEN h."input_micro_diem_per_mtok" IS NOT NULL
                      THEN svc_burn_micro_diem(p_prompt_tokens[u.n], p_completion_tokens[u.n],
                                               h."input_micro_diem_per_mtok", h."output_micro_diem_per_mtok")
                      ELSE p_burn_micro_diem[u.n] END,
                 h."burn_micro_diem")::bigint AS burn
    FROM "holds" h
    JOIN (SELECT DISTINCT ON (i.id) i.id, i.n::integer AS n
          FROM unnest(p_hold_ids) WITH ORDINALITY AS i(id, n) WHERE v_ok[i.n] ORDER BY i.id, i.n) u ON u.id = h."id"
    WHERE h."status"::text = 'active'
    ORDER BY h."id"
    FOR UPDATE OF h
  ) m
  CROSS JOIN LATERAL (SELECT LEAST(svc_charge_micros(m.burn, m.price), m.amount) AS charge) c
  CROSS JOIN LATERAL (SELECT svc_supplier_micros(c.charge, p_fee_bps) AS share, svc_fee_micros(c.charge, p_fee_bps) AS fee) s
  JOIN "offers" o ON o."id" = m.offer_id
  LEFT JOIN "ledger_accounts" sa ON sa."kind" = 'supplier' AND sa."owner_id" = o."supplier_id";

  IF c_n IS NOT NULL THEN
    -- 2. Offer days: burn, release the reserved burn, count the clears, once per (offer, day).
    WITH a AS (
      SELECT i.offer_id, i.day, SUM(i.reserved_burn)::bigint AS reserved_burn, SUM(i.burn)::bigint AS burn,
             COUNT(*)::integer AS n, (COUNT(*) FILTER (WHERE p_usage_disputed[i.n]))::integer AS disputed
      FROM unnest(c_offer, c_day, c_reserved_burn, c_burn, c_n) AS i(offer_id, day, reserved_burn, burn, n)
      GROUP BY i.offer_id, i.day
    ), locked AS MATERIALIZED (
      SELECT d."offer_id", d."day" FROM "offer_days" d JOIN a ON a.offer_id = d."offer_id" AND a.day = d."day"
      ORDER BY d."offer_id", d."day"
      FOR NO KEY UPDATE OF d
    )
    UPDATE "offer_days" d
    SET "held_micro_diem" = d."held_micro_diem" - a.reserved_burn,
        "burned_micro_diem" = d."burned_micro_diem" + a.burn,
        "clears" = d."clears" + a.n,
        "disputed_clears" = d."disputed_clears" + a.disputed
    FROM locked l JOIN a ON a.offer_id = l."offer_id" AND a.day = l."day"
    WHERE d."offer_id" = l."offer_id" AND d."day" = l."day";

    -- 3. Buyers pay, once per account. Each item reports its buyer's balance after the whole batch (this update's
    --    RETURNING), not after its own clear as when clears ran one by one.
    WITH a AS (
      SELECT i.account_id, SUM(i.charge)::bigint AS charge, SUM(i.amount)::bigint AS amount
      FROM unnest(c_account, c_charge, c_amount) AS i(account_id, charge, amount)
      GROUP BY i.account_id
    ), locked AS MATERIALIZED (
      SELECT la."id", la."owner_id" FROM "ledger_accounts" la JOIN a ON la."kind" = 'buyer' AND la."owner_id" = a.account_id
      ORDER BY la."id"
      FOR NO KEY UPDATE OF la
    ), paid AS (
      UPDATE "ledger_accounts" la
      SET "balance_micros" = la."balance_micros" - a.charge, "held_micros" = la."held_micros" - a.amount
      FROM locked l JOIN a ON a.account_id = l."owner_id"
      WHERE la."id" = l."id"
      RETURNING la."owner_id" AS owner_id, la."id" AS account, la."balance_micros" AS balance
    )
    SELECT array_agg(p.owner_id), array_agg(p.account), array_agg(p.balance) INTO b_owner, b_account, b_balance FROM paid p;

    -- 4. Keys: the spend reserved becomes the spend charged, once per key.
    WITH a AS (
      SELECT i.api_key_id, SUM(i.amount)::bigint AS amount, SUM(i.charge)::bigint AS charge
      FROM unnest(c_key, c_amount, c_charge) AS i(api_key_id, amount, charge)
      GROUP BY i.api_key_id
    ), locked AS MATERIALIZED (
      SELECT k."id" FROM "api_keys" k JOIN a ON a.api_key_id = k."id"
      ORDER BY k."id"
      FOR NO KEY UPDATE OF k
    )
    UPDATE "api_keys" k
    SET "spent_micros" = k."spent_micros" - a.amount + a.charge, "last_used_at" = p_now
    FROM locked l JOIN a ON a.api_key_id = l."id"
    WHERE k."id" = l."id";

    -- 5. Earnings, once per supplier account, and the fee, once: a supplier without an account gets one first
    --    (in supplier order, so concurrent first uses wait in one order).
    IF array_position(c_supplier, NULL) IS NOT NULL THEN
      INSERT INTO "ledger_accounts" ("kind", "owner_id")
      SELECT DISTINCT 'supplier'::"ledger_account_kind", o."supplier_id"
      FROM "offers" o
      WHERE o."id" = ANY(c_offer)
        AND NOT EXISTS (SELECT 1 FROM "ledger_accounts" la WHERE la."kind" = 'supplier' AND la."owner_id" = o."supplier_id")
      ORDER BY o."supplier_id"
      ON CONFLICT DO NOTHING;
      SELECT array_agg(sa."id" ORDER BY i.x) INTO c_supplier
      FROM unnest(c_offer) WITH ORDINALITY AS i(offer_id, x)
      LEFT JOIN "offers" o ON o."id" = i.offer_id
      LEFT JOIN "ledger_accounts" sa ON sa."kind" = 'supplier' AND sa."owner_id" = o."supplier_id";
    END IF;
    WITH a AS (
      SELECT i.account, SUM(i.amount)::bigint AS amount
      FROM (SELECT * FROM unnest(c_supplier, c_share) UNION ALL SELECT v_platform, f FROM unnest(c_fee) AS f) AS i(account, amount)
      GROUP BY i.account
      HAVING SUM(i.amount) <> 0
    ), locked AS MATERIALIZED (
      SELECT la."id" FROM "ledger_accounts" la JOIN a ON a.account = la."id"
      ORDER BY la."kind", la."id"
      FOR NO KEY UPDATE OF la
    )
    UPDATE "ledger_accounts" la
    SET "balance_micros" = la."balance_micros" + a.amount
    FROM locked l JOIN a ON a.account = l."id"
    WHERE la."id" = l."id";

    -- 6. The records, one set per clear: completion, clear, journal entry and its lines (all lines in ONE insert,
    --    which the balance trigger checks per entry). The ids are drawn up front, so the rows refer to each other
    --    without joining on RETURNING.
    WITH item AS MATERIALIZED (
      SELECT i.*, p_completion_ids[i.n] AS completion_id, b.account AS buyer,
             gen_random_uuid() AS clear_id, gen_random_uuid() AS entry_id
      FROM unnest(c_n, c_hold, c_account, c_key, c_offer, c_model, c_price, c_burn, c_charge, c_share, c_fee, c_supplier)
        AS i(n, hold_id, account_id, api_key_id, offer_id, model_id, price, burn, charge, share, fee, supplier)
      LEFT JOIN unnest(b_owner, b_account) AS b(owner_id, account) ON b.owner_id = i.account_id
    ),
    new_completions AS (
      INSERT INTO "completions" ("id", "hold_id", "account_id", "api_key_id", "offer_id", "model_id",
                                 "prompt_tokens", "completion_tokens", "usage_estimated", "latency_ms", "created_at",
                                 "claimed_prompt_tokens", "claimed_completion_tokens", "usage_disputed")
      SELECT t.completion_id, t.hold_id, t.account_id, t.api_key_id, t.offer_id, t.model_id,
             p_prompt_tokens[t.n], p_completion_tokens[t.n], p_usage_estimated[t.n], p_latency_ms[t.n], p_now,
             LEAST(p_claimed_prompt_tokens[t.n], 2147483647), LEAST(p_claimed_completion_tokens[t.n], 2147483647),
             p_usage_disputed[t.n]
      FROM item t
    ),
    new_clears AS (
      INSERT INTO "clears" ("id", "completion_id", "offer_id", "model_id", "price_cents", "burn_micro_diem",
                            "charge_micros", "supplier_micros", "fee_micros", "created_at")
      SELECT t.clear_id, t.completion_id, t.offer_id, t.model_id, t.price, t.burn, t.charge, t.share, t.fee, p_now
      FROM item t
    ),
    new_entries AS (
      INSERT INTO "journal_entries" ("id", "kind", "clear_id", "created_at")
      SELECT t.entry_id, 'clear'::"journal_entry_kind", t.clear_id, p_now FROM item t
    )
    INSERT INTO "journal_lines" ("entry_id", "ledger_account_id", "amount_micros")
    SELECT t.entry_id, l.account, l.amount
    FROM item t
    CROSS JOIN LATERAL (VALUES (t.buyer, -t.charge), (t.supplier, t.share), (v_platform, t.fee)) AS l(account, amount)
    WHERE l.amount <> 0;

    UPDATE "holds" h SET "status" = 'cleared', "settled_at" = p_now WHERE h."id" = ANY(c_hold);

    -- 7. Health: a served completion clears the offer's failure streak (refreshing last_success_at at most once a
    --    minute).
    WITH locked AS MATERIALIZED (
      SELECT o."id" FROM "offers" o
      WHERE o."id" = ANY(c_offer)
        AND (o."consecutive_failures" > 0 OR o."unhealthy_until" IS NOT NULL OR o."last_success_at" IS NULL
             OR o."last_success_at" < p_now - interval '60 seconds')
      ORDER BY o."id"
      FOR NO KEY UPDATE OF o
    )
    UPDATE "offers" o SET "consecutive_failures" = 0, "unhealthy_until" = NULL, "last_success_at" = p_now
    FROM locked l
    WHERE o."id" = l."id"
      AND (o."consecutive_failures" > 0 OR o."unhealthy_until" IS NOT NULL OR o."last_success_at" IS NULL
           OR o."last_success_at" < p_now - interval '60 seconds');
  END IF;

  -- One row per input position.
  RETURN QUERY
  SELECT u.n::integer, CASE WHEN c.n IS NOT NULL THEN 'ok' WHEN v_ok[u.n] THEN 'not_active' ELSE 'rejected' END,
         c.charge, c.burn, c.price, b.balance
  FROM unnest(p_hold_ids) WITH ORDINALITY AS u(id, n)
  LEFT JOIN unnest(c_n, c_charge, c_burn, c_price, c_account) AS c(n, charge, burn, price, account_id) ON c.n = u.n
  LEFT JOIN unnest(b_owner, b_balance) AS b(owner_id, balance) ON b.owner_id = c.account_id
  ORDER BY u.n;
END;
$$;

-- Releases a hold that will not be cleared (upstream failure, or a crash left it past its deadline). Returns false
-- when the hold was no longer active (already cleared or released): releasing is idempotent.
CREATE OR REPLACE FUNCTION "svc_release_hold"(p_hold_id uuid, p_now timestamptz) RETURNS boolean
LANGUAGE plpgsql
SET enable_seqscan = off
AS $$
DECLARE
  v_hold "holds"%ROWTYPE;
BEGIN
  SELECT * INTO v_hold FROM "holds" WHERE "id" = p_hold_id AND "status" = 'active' FOR UPDATE;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  UPDATE "offer_days" SET "held_micro_diem" = "held_micro_diem" - v_hold."burn_micro_diem"
  WHERE "offer_id" = v_hold."offer_id" AND "day" = v_hold."day";
  UPDATE "ledger_accounts" SET "held_micros" = "held_micros" - v_hold."amount_micros"
  WHERE "kind" = 'buyer' AND "owner_id" = v_hold."account_id";
  UPDATE "api_keys" SET "spent_micros" = "spent_micros" - v_hold."amount_micros" WHERE "id" = v_hold."api_key_id";
  UPDATE "holds" SET "status" = 'released', "settled_at" = p_now WHERE "id" = v_hold."id";
  RETURN true;
END;
$$;

-- Every list-price change, whoever makes it, appends to the history (model_prices).
CREATE OR REPLACE FUNCTION svc_record_model_price() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT'
     OR NEW.input_micro_diem_per_mtok IS DISTINCT FROM OLD.input_micro_diem_per_mtok
     OR NEW.output_micro_diem_per_mtok IS DISTINCT FROM OLD.output_micro_diem_per_mtok THEN
    INSERT INTO model_prices (model_id, input_micro_diem_per_mtok, output_micro_diem_per_mtok, effective_from)
    VALUES (NEW.id, NEW.input_micro_diem_per_mtok, NEW.output_micro_diem_per_mtok, clock_timestamp());
  END IF;
  RETURN NEW;
END $$;

-- The list-price history is append-only.
CREATE OR REPLACE FUNCTION svc_model_prices_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'model_prices is append-only (list-price history)';
END $$;

-- Ledger guard (a trigger rather than a CHECK: Prisma 6.19's WASM schema engine panics introspecting CHECK
-- constraints): a non-external account never goes negative, and never holds more than its balance.
CREATE OR REPLACE FUNCTION "assert_ledger_account_within_bounds"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."kind" <> 'external' AND NEW."balance_micros" < 0 THEN
    RAISE EXCEPTION 'ledger account % would go negative (balance %)', NEW."id", NEW."balance_micros"
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW."held_micros" < 0 OR (NEW."kind" <> 'external' AND NEW."held_micros" > NEW."balance_micros") THEN
    RAISE EXCEPTION 'ledger account % would hold % of a balance of %', NEW."id", NEW."held_micros", NEW."balance_micros"
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;

-- Ledger guard: an offer's burned and held capacity never go negative.
CREATE OR REPLACE FUNCTION "assert_offer_day_non_negative"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."burned_micro_diem" < 0 OR NEW."held_micro_diem" < 0 THEN
    RAISE EXCEPTION 'offer % capacity use on % would go negative', NEW."offer_id", NEW."day"
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;

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

-- Journal lines are append-only: a posted movement is corrected by a new entry, never edited.
CREATE OR REPLACE FUNCTION "refuse_journal_line_changes"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'journal lines are append-only' USING ERRCODE = 'check_violation';
END;
$$;
