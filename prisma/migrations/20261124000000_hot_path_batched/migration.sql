-- The completion hot path, batched (issue 13): one statement before forwarding, one after, each over arrays so
-- concurrent completions share one transaction and one WAL flush (lib/router/group-commit.ts). Hand-written.
--
-- * A hold snapshots the model's list prices when it is reserved, and the clear meters with the hold's prices:
--   a clear uses the price in force at reservation, whatever the catalog says by then.
-- * svc_reserve_batch commits without waiting for the WAL flush (see inside); the clear is durable.
-- * svc_reserve_batch authenticates each key itself (revoked or expired keys fail at once, whatever any
--   process cached), resolves the max price (request, key cap, account default, platform default), reads the
--   model's prices and reserves as svc_reserve_completion does. Each row gets its own outcome; none raises.
-- * svc_clear_batch clears each row as svc_clear_completion does and does the health bookkeeping of the
--   offers it served. Supplier and platform earnings are posted once per batch per account, and the platform's
--   fee goes to one of 16 platform sub-accounts (kind 'platform', summed on read), so no single row is locked
--   by every clear. Every clear still has its own journal entry whose lines sum to zero.
-- Lock order as before: hold → offer_days → buyer ledger account → api_key → supplier/platform accounts → offers.

ALTER TABLE "holds" ADD COLUMN "input_micro_diem_per_mtok" BIGINT,
ADD COLUMN "output_micro_diem_per_mtok" BIGINT;

-- Platform fee sub-accounts 1..15 (the original platform account is sub-account 0).
INSERT INTO "ledger_accounts" ("id", "kind", "owner_id")
SELECT ('00000000-0000-4000-8000-0000000001' || lpad(to_hex(s), 2, '0'))::uuid, 'platform', NULL
FROM generate_series(1, 15) s
ON CONFLICT DO NOTHING;

CREATE FUNCTION "svc_platform_shard"(p_shard integer) RETURNS uuid
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN p_shard % 16 = 0 THEN '00000000-0000-4000-8000-000000000001'::uuid
              ELSE ('00000000-0000-4000-8000-0000000001' || lpad(to_hex(p_shard % 16), 2, '0'))::uuid END
$$;

-- status: 'ok' | 'invalid_api_key' | 'max_price_above_key_cap' | 'model_not_found' | 'insufficient_balance'
--       | 'spend_limit_exceeded' | 'no_offer'. ord is the 1-based position in the arrays.
CREATE FUNCTION "svc_reserve_batch"(
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
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_day date := (p_now AT TIME ZONE 'UTC')::date;
  v_key record;
  v_model record;
  v_offer record;
  v_max integer;
  v_burn bigint;
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
    -- burn = ceil(tokens x list price / 1M), as lib/money.ts burnMicroDiem.
    v_burn := (p_prompt_tokens[i]::bigint * v_model.input + p_output_tokens[i]::bigint * v_model.output + 999999) / 1000000;

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

-- status: 'ok' | 'not_active' (already cleared or released: nothing done). Burn and charge are capped by the hold;
-- holds reserved before their prices were snapshotted are metered by p_burn_micro_diem (the caller's figure).
CREATE FUNCTION "svc_clear_batch"(
  p_hold_ids uuid[],
  p_completion_ids text[],
  p_prompt_tokens integer[],
  p_completion_tokens integer[],
  p_usage_estimated boolean[],
  p_latency_ms integer[],
  p_burn_micro_diem bigint[],
  p_claimed_prompt_tokens integer[],
  p_claimed_completion_tokens integer[],
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
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_hold "holds"%ROWTYPE;
  v_burn bigint;
  v_charge bigint;
  v_supplier_share bigint;
  v_fee bigint;
  v_buyer_account uuid;
  v_balance bigint;
  v_supplier_account uuid;
  v_clear uuid;
  v_entry uuid;
  v_platform uuid := svc_platform_shard(p_platform_shard);
  v_fees bigint := 0;
  v_suppliers uuid[] := '{}';
  v_shares bigint[] := '{}';
  v_offers uuid[] := '{}';
  v_pos integer;
  i integer;
BEGIN
  -- Rows in a fixed order (offer, then buyer): concurrent batches lock offer days and balances in the same order.
  FOR i IN SELECT u.ord::integer FROM unnest(p_hold_ids) WITH ORDINALITY AS u(id, ord) LEFT JOIN "holds" h ON h."id" = u.id
           ORDER BY h."offer_id", h."account_id", u.ord LOOP
    SELECT * INTO v_hold FROM "holds" WHERE "id" = p_hold_ids[i] AND "status" = 'active' FOR UPDATE;
    IF NOT FOUND THEN
      RETURN QUERY SELECT i, 'not_active'::text, NULL::bigint, NULL::bigint, NULL::integer, NULL::bigint;
      CONTINUE;
    END IF;

    IF v_hold."input_micro_diem_per_mtok" IS NOT NULL THEN
      v_burn := (p_prompt_tokens[i]::bigint * v_hold."input_micro_diem_per_mtok"
                 + p_completion_tokens[i]::bigint * v_hold."output_micro_diem_per_mtok" + 999999) / 1000000;
    ELSE
      v_burn := p_burn_micro_diem[i];
    END IF;
    v_burn := LEAST(v_burn, v_hold."burn_micro_diem");
    v_charge := LEAST((v_burn * v_hold."price_cents" + 99) / 100, v_hold."amount_micros");
    v_supplier_share := v_charge * (10000 - p_fee_bps) / 10000;
    v_fee := v_charge - v_supplier_share;

    UPDATE "offer_days"
    SET "held_micro_diem" = "held_micro_diem" - v_hold."burn_micro_diem",
        "burned_micro_diem" = "burned_micro_diem" + v_burn,
        "clears" = "clears" + 1,
        "disputed_clears" = "disputed_clears" + CASE WHEN p_usage_disputed[i] THEN 1 ELSE 0 END
    WHERE "offer_id" = v_hold."offer_id" AND "day" = v_hold."day";

    UPDATE "ledger_accounts"
    SET "balance_micros" = "balance_micros" - v_charge, "held_micros" = "held_micros" - v_hold."amount_micros"
    WHERE "kind" = 'buyer' AND "owner_id" = v_hold."account_id"
    RETURNING "id", "ledger_accounts"."balance_micros" INTO v_buyer_account, v_balance;

    UPDATE "api_keys"
    SET "spent_micros" = "spent_micros" - v_hold."amount_micros" + v_charge, "last_used_at" = p_now
    WHERE "id" = v_hold."api_key_id";

    -- The supplier's account is found (created on first use) without locking it; its balance moves once per batch.
    SELECT la."id" INTO v_supplier_account FROM "ledger_accounts" la JOIN "offers" o ON o."supplier_id" = la."owner_id"
    WHERE o."id" = v_hold."offer_id" AND la."kind" = 'supplier';
    IF NOT FOUND THEN
      INSERT INTO "ledger_accounts" ("kind", "owner_id") SELECT 'supplier', o."supplier_id" FROM "offers" o WHERE o."id" = v_hold."offer_id"
      ON CONFLICT DO NOTHING;
      SELECT la."id" INTO v_supplier_account FROM "ledger_accounts" la JOIN "offers" o ON o."supplier_id" = la."owner_id"
      WHERE o."id" = v_hold."offer_id" AND la."kind" = 'supplier';
    END IF;
    v_pos := array_position(v_suppliers, v_supplier_account);
    IF v_pos IS NULL THEN
      v_suppliers := v_suppliers || v_supplier_account;
      v_shares := v_shares || v_supplier_share;
    ELSE
      v_shares[v_pos] := v_shares[v_pos] + v_supplier_share;
    END IF;
    v_fees := v_fees + v_fee;
    IF NOT v_hold."offer_id" = ANY(v_offers) THEN
      v_offers := v_offers || v_hold."offer_id";
    END IF;

    INSERT INTO "completions" ("id", "hold_id", "account_id", "api_key_id", "offer_id", "model_id",
                               "prompt_tokens", "completion_tokens", "usage_estimated", "latency_ms", "created_at",
                               "claimed_prompt_tokens", "claimed_completion_tokens", "usage_disputed")
    VALUES (p_completion_ids[i], v_hold."id", v_hold."account_id", v_hold."api_key_id", v_hold."offer_id", v_hold."model_id",
            p_prompt_tokens[i], p_completion_tokens[i], p_usage_estimated[i], p_latency_ms[i], p_now,
            p_claimed_prompt_tokens[i], p_claimed_completion_tokens[i], p_usage_disputed[i]);

    INSERT INTO "clears" ("completion_id", "offer_id", "model_id", "price_cents", "burn_micro_diem",
                          "charge_micros", "supplier_micros", "fee_micros", "created_at")
    VALUES (p_completion_ids[i], v_hold."offer_id", v_hold."model_id", v_hold."price_cents", v_burn,
            v_charge, v_supplier_share, v_fee, p_now)
    RETURNING "id" INTO v_clear;

    INSERT INTO "journal_entries" ("kind", "clear_id", "created_at") VALUES ('clear', v_clear, p_now)
    RETURNING "id" INTO v_entry;
    INSERT INTO "journal_lines" ("entry_id", "ledger_account_id", "amount_micros")
    SELECT v_entry, l.account, l.amount
    FROM (VALUES (v_buyer_account, -v_charge), (v_supplier_account, v_supplier_share), (v_platform, v_fee)) AS l(account, amount)
    WHERE l.amount <> 0;

    UPDATE "holds" SET "status" = 'cleared', "settled_at" = p_now WHERE "id" = v_hold."id";

    RETURN QUERY SELECT i, 'ok'::text, v_charge, v_burn, v_hold."price_cents", v_balance;
  END LOOP;

  -- Earnings, once per account per batch, in id order.
  UPDATE "ledger_accounts" la SET "balance_micros" = la."balance_micros" + s.amount
  FROM (SELECT u.account, SUM(u.amount) AS amount FROM unnest(v_suppliers, v_shares) AS u(account, amount) GROUP BY u.account) s
  WHERE la."id" = s.account AND s.amount <> 0;
  IF v_fees <> 0 THEN
    UPDATE "ledger_accounts" SET "balance_micros" = "balance_micros" + v_fees WHERE "id" = v_platform;
  END IF;

  -- Health: a served completion clears the offer's failure streak (refreshing last_success_at at most once a minute).
  UPDATE "offers" SET "consecutive_failures" = 0, "unhealthy_until" = NULL, "last_success_at" = p_now
  WHERE "id" = ANY(v_offers)
    AND ("consecutive_failures" > 0 OR "unhealthy_until" IS NOT NULL OR "last_success_at" IS NULL
         OR "last_success_at" < p_now - interval '60 seconds');
END;
$$;
