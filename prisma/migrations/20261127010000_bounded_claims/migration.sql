-- Bounded claims (issue 27): no supplier's number can fail a clear, and one bad item never fails its batch.
-- Hand-written.
--
-- * models.bills_reasoning: the catalog says which models bill hidden reasoning. A buyer who asks for reasoning
--   (reasoning_effort other than "none") on such a model pays the reasoning tokens its supplier claims, up to the
--   max_tokens forwarded (lib/upstream/metering.ts); otherwise a claim beyond svc's count is disputed as before.
-- * svc_clear_batch takes its counts as bigint[] (the claims are the supplier's numbers: 2147483648 in an int[]
--   failed the whole statement, "out of range for type integer"). The claim columns stay integer: a claim beyond
--   2147483647 is stored as 2147483647 (it is far outside anything a request allows, so it is already a dispute and
--   a health failure, lib/upstream/metering.ts), which spares completions a table rewrite. Every item is checked
--   first (counts in range, a completion id not yet used and not repeated in the batch); one that fails answers
--   'rejected' alone and the rest clear in the same statement. The body is otherwise the set-based one of
--   20261125000000_clear_set_based (its header states what a clear does and the lock order; both unchanged).
--   The old signature is dropped: an instance still running the old code casts its integer[] arguments, which
--   PostgreSQL coerces to bigint[] implicitly, so a rolling deploy keeps clearing.
-- * svc_reserve_batch refuses an item it cannot reserve (a missing value, a negative count, a burn whose charge
--   would not fit a bigint) with 'rejected', alone, instead of failing the statement. Same signature.
-- Both keep SET enable_seqscan = off (20261126000000_hot_path_index_plans: a CREATE OR REPLACE drops it, so it is
-- stated in the definitions; tests/integration/clear-batch.test.ts checks it).

ALTER TABLE "models" ADD COLUMN "bills_reasoning" BOOLEAN NOT NULL DEFAULT false;

-- status: 'ok' | 'invalid_api_key' | 'max_price_above_key_cap' | 'model_not_found' | 'insufficient_balance'
--       | 'spend_limit_exceeded' | 'no_offer' | 'rejected'. ord is the 1-based position in the arrays.
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
    -- burn = ceil(tokens x list price / 1M), as lib/money.ts burnMicroDiem, computed exactly: a burn whose charge
    -- (at up to 10,000 cents per diem) would not fit a bigint refuses this item alone, never the statement.
    v_burn_exact := div(p_prompt_tokens[i]::numeric * v_model.input + p_output_tokens[i]::numeric * v_model.output + 999999, 1000000);
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
        AND (NOT p_tools[i] OR om."supports_tools") AND (NOT p_json_schema[i] OR om."supports_json_schema")
        AND (NOT p_vision[i] OR om."supports_vision")
      LEFT JOIN "offer_days" d ON d."offer_id" = o."id" AND d."day" = v_day
      WHERE o."status" = 'active'
        AND o."price_cents" <= v_max
        AND (o."unhealthy_until" IS NULL OR o."unhealthy_until" <= p_now)
        AND o."daily_capacity_micro_diem" - COALESCE(d."burned_micro_diem", 0) - COALESCE(d."held_micro_diem", 0) >= v_burn
      ORDER BY o."price_cents", o."created_at", o."id"
    LOOP
      INSERT INTO "offer_days" ("offer_id", "day") VALUES (v_offer."id", v_day) ON CONFLICT DO NOTHING;
      UPDATE "offer_days" SET "held_micro_diem" = "held_micro_diem" + v_burn
      WHERE "offer_id" = v_offer."id" AND "day" = v_day
        AND "burned_micro_diem" + "held_micro_diem" + v_burn <= v_offer."daily_capacity_micro_diem";
      IF NOT FOUND THEN
        CONTINUE;
      END IF;
      v_done := true;
      v_charge := (v_burn * v_offer."price_cents" + 99) / 100;

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

DROP FUNCTION "svc_clear_batch"(uuid[], text[], integer[], integer[], boolean[], integer[], bigint[], integer[], integer[], boolean[], integer, timestamptz, integer);

-- status: 'ok' | 'not_active' (the hold is not active, or not found: nothing done) | 'rejected' (the item itself
-- cannot be cleared: nothing done; its hold stays active for the caller to release).
CREATE FUNCTION "svc_clear_batch"(
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
         array_agg(m.burn), array_agg(c.charge), array_agg(s.share), array_agg(c.charge - s.share), array_agg(sa."id")
  INTO c_n, c_hold, c_account, c_key, c_offer, c_day, c_model, c_price, c_amount, c_reserved_burn,
       c_burn, c_charge, c_share, c_fee, c_supplier
  FROM (
    SELECT u.n, h."id", h."account_id", h."api_key_id", h."offer_id", h."day", h."model_id",
           h."price_cents" AS price, h."amount_micros" AS amount, h."burn_micro_diem" AS reserved_burn,
           LEAST(CASE WHEN h."input_micro_diem_per_mtok" IS NOT NULL
                      THEN (p_prompt_tokens[u.n]::bigint * h."input_micro_diem_per_mtok"
                            + p_completion_tokens[u.n]::bigint * h."output_micro_diem_per_mtok" + 999999) / 1000000
                      ELSE p_burn_micro_diem[u.n] END,
                 h."burn_micro_diem") AS burn
    FROM "holds" h
    JOIN (SELECT DISTINCT ON (i.id) i.id, i.n::integer AS n
          FROM unnest(p_hold_ids) WITH ORDINALITY AS i(id, n) WHERE v_ok[i.n] ORDER BY i.id, i.n) u ON u.id = h."id"
    WHERE h."status"::text = 'active'
    ORDER BY h."id"
    FOR UPDATE OF h
  ) m
  CROSS JOIN LATERAL (SELECT LEAST((m.burn * m.price + 99) / 100, m.amount) AS charge) c
  CROSS JOIN LATERAL (SELECT c.charge * (10000 - p_fee_bps) / 10000 AS share) s
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
