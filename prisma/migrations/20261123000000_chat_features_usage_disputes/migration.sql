-- Chat features and usage verification (issues 11 and 12).
--
-- Features: what each catalog model can do (tools, JSON-schema output, images) and what each offer serves for
-- it; the router reserves only on offers that serve what the request uses.
-- Usage verification: every clear counts on its offer's day, and so does every clear whose claimed usage
-- exceeded our own count beyond the tolerance (a dispute); completions keep the claim beside what was billed.
-- The two hot-path functions are replaced (new parameters), still one round trip each.

-- AlterTable
ALTER TABLE "completions" ADD COLUMN     "claimed_completion_tokens" INTEGER,
ADD COLUMN     "claimed_prompt_tokens" INTEGER,
ADD COLUMN     "usage_disputed" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "models" ADD COLUMN     "supports_json_schema" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "supports_tools" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "supports_vision" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "offer_days" ADD COLUMN     "clears" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "disputed_clears" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "offer_models" ADD COLUMN     "supports_json_schema" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "supports_tools" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "supports_vision" BOOLEAN NOT NULL DEFAULT false;

-- The catalog's models as lib/market/catalog.ts lists them (the seed keeps them in step), and existing offers
-- serve what their model can do (their upstreams were not asked when they were posted).
UPDATE "models" SET "supports_tools" = true, "supports_json_schema" = true WHERE "id" IN ('llama-3.3-70b', 'qwen3-235b', 'mistral-31-24b');
UPDATE "models" SET "supports_vision" = true WHERE "id" = 'mistral-31-24b';
UPDATE "models" SET "supports_json_schema" = true WHERE "id" = 'venice-uncensored';
UPDATE "offer_models" om SET "supports_tools" = m."supports_tools", "supports_json_schema" = m."supports_json_schema",
  "supports_vision" = m."supports_vision"
FROM "models" m WHERE m."id" = om."model_id";

-- Past clears count on their offer's day.
UPDATE "offer_days" d SET "clears" = c.n
FROM (SELECT "offer_id", ("created_at" AT TIME ZONE 'UTC')::date AS day, COUNT(*)::int AS n FROM "clears" GROUP BY 1, 2) c
WHERE c."offer_id" = d."offer_id" AND c.day = d."day";

DROP FUNCTION "svc_reserve_completion"(uuid, uuid, text, integer, bigint, timestamptz, timestamptz);
DROP FUNCTION "svc_clear_completion"(uuid, text, integer, integer, boolean, integer, bigint, integer, timestamptz);

-- Reserve the worst case on the cheapest eligible offer that serves the request's features (p_tools,
-- p_json_schema, p_vision); otherwise as before (see 20261121010000_completion_hot_path).
CREATE FUNCTION "svc_reserve_completion"(
  p_account_id uuid,
  p_api_key_id uuid,
  p_model_id text,
  p_max_price_cents integer,
  p_burn_micro_diem bigint,
  p_now timestamptz,
  p_expires_at timestamptz,
  p_tools boolean,
  p_json_schema boolean,
  p_vision boolean
) RETURNS TABLE (
  status text,
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
  v_offer record;
  v_charge bigint;
  v_hold uuid;
BEGIN
  FOR v_offer IN
    SELECT o."id", o."price_cents", o."daily_capacity_micro_diem",
           o."upstream_base_url", o."upstream_key_ciphertext", om."upstream_model"
    FROM "offers" o
    JOIN "offer_models" om ON om."offer_id" = o."id" AND om."model_id" = p_model_id
      AND (NOT p_tools OR om."supports_tools") AND (NOT p_json_schema OR om."supports_json_schema")
      AND (NOT p_vision OR om."supports_vision")
    LEFT JOIN "offer_days" d ON d."offer_id" = o."id" AND d."day" = v_day
    WHERE o."status" = 'active'
      AND o."price_cents" <= p_max_price_cents
      AND (o."unhealthy_until" IS NULL OR o."unhealthy_until" <= p_now)
      AND o."daily_capacity_micro_diem" - COALESCE(d."burned_micro_diem", 0) - COALESCE(d."held_micro_diem", 0) >= p_burn_micro_diem
    ORDER BY o."price_cents", o."created_at", o."id"
  LOOP
    -- A concurrent request may have taken the capacity since the scan: the conditional update re-checks it.
    INSERT INTO "offer_days" ("offer_id", "day") VALUES (v_offer."id", v_day) ON CONFLICT DO NOTHING;
    UPDATE "offer_days" SET "held_micro_diem" = "held_micro_diem" + p_burn_micro_diem
    WHERE "offer_id" = v_offer."id" AND "day" = v_day
      AND "burned_micro_diem" + "held_micro_diem" + p_burn_micro_diem <= v_offer."daily_capacity_micro_diem";
    IF NOT FOUND THEN
      CONTINUE;
    END IF;

    v_charge := (p_burn_micro_diem * v_offer."price_cents" + 99) / 100;

    UPDATE "ledger_accounts" SET "held_micros" = "held_micros" + v_charge
    WHERE "kind" = 'buyer' AND "owner_id" = p_account_id AND "balance_micros" - "held_micros" >= v_charge;
    IF NOT FOUND THEN
      UPDATE "offer_days" SET "held_micro_diem" = "held_micro_diem" - p_burn_micro_diem
      WHERE "offer_id" = v_offer."id" AND "day" = v_day;
      RETURN QUERY SELECT 'insufficient_balance'::text, NULL::uuid, v_offer."id", v_offer."price_cents", v_charge,
        NULL::text, NULL::text, NULL::text;
      RETURN;
    END IF;

    UPDATE "api_keys" SET "spent_micros" = "spent_micros" + v_charge
    WHERE "id" = p_api_key_id AND ("spend_limit_micros" IS NULL OR "spent_micros" + v_charge <= "spend_limit_micros");
    IF NOT FOUND THEN
      UPDATE "offer_days" SET "held_micro_diem" = "held_micro_diem" - p_burn_micro_diem
      WHERE "offer_id" = v_offer."id" AND "day" = v_day;
      UPDATE "ledger_accounts" SET "held_micros" = "held_micros" - v_charge
      WHERE "kind" = 'buyer' AND "owner_id" = p_account_id;
      RETURN QUERY SELECT 'spend_limit_exceeded'::text, NULL::uuid, v_offer."id", v_offer."price_cents", v_charge,
        NULL::text, NULL::text, NULL::text;
      RETURN;
    END IF;

    INSERT INTO "holds" ("account_id", "api_key_id", "offer_id", "model_id", "day", "price_cents",
                         "amount_micros", "burn_micro_diem", "expires_at", "created_at")
    VALUES (p_account_id, p_api_key_id, v_offer."id", p_model_id, v_day, v_offer."price_cents",
            v_charge, p_burn_micro_diem, p_expires_at, p_now)
    RETURNING "id" INTO v_hold;

    RETURN QUERY SELECT 'ok'::text, v_hold, v_offer."id", v_offer."price_cents", v_charge,
      v_offer."upstream_base_url", v_offer."upstream_key_ciphertext", v_offer."upstream_model";
    RETURN;
  END LOOP;

  RETURN QUERY SELECT 'no_offer'::text, NULL::uuid, NULL::uuid, NULL::integer, NULL::bigint, NULL::text, NULL::text, NULL::text;
END;
$$;

-- Clear one completion as before, and count the clear (and its dispute, if any) on the offer's day.
CREATE FUNCTION "svc_clear_completion"(
  p_hold_id uuid,
  p_completion_id text,
  p_prompt_tokens integer,
  p_completion_tokens integer,
  p_usage_estimated boolean,
  p_latency_ms integer,
  p_burn_micro_diem bigint,
  p_fee_bps integer,
  p_now timestamptz,
  p_claimed_prompt_tokens integer,
  p_claimed_completion_tokens integer,
  p_usage_disputed boolean
) RETURNS TABLE (
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
  v_supplier_id uuid;
  v_clear uuid;
  v_entry uuid;
  c_platform constant uuid := '00000000-0000-4000-8000-000000000001';
BEGIN
  SELECT * INTO v_hold FROM "holds" WHERE "id" = p_hold_id AND "status" = 'active' FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'hold % is not active', p_hold_id USING ERRCODE = 'check_violation';
  END IF;

  v_burn := LEAST(p_burn_micro_diem, v_hold."burn_micro_diem");
  v_charge := LEAST((v_burn * v_hold."price_cents" + 99) / 100, v_hold."amount_micros");
  v_supplier_share := v_charge * (10000 - p_fee_bps) / 10000;
  v_fee := v_charge - v_supplier_share;

  UPDATE "offer_days"
  SET "held_micro_diem" = "held_micro_diem" - v_hold."burn_micro_diem",
      "burned_micro_diem" = "burned_micro_diem" + v_burn,
      "clears" = "clears" + 1,
      "disputed_clears" = "disputed_clears" + CASE WHEN p_usage_disputed THEN 1 ELSE 0 END
  WHERE "offer_id" = v_hold."offer_id" AND "day" = v_hold."day";

  UPDATE "ledger_accounts"
  SET "balance_micros" = "balance_micros" - v_charge, "held_micros" = "held_micros" - v_hold."amount_micros"
  WHERE "kind" = 'buyer' AND "owner_id" = v_hold."account_id"
  RETURNING "id", "ledger_accounts"."balance_micros" INTO v_buyer_account, v_balance;

  UPDATE "api_keys"
  SET "spent_micros" = "spent_micros" - v_hold."amount_micros" + v_charge, "last_used_at" = p_now
  WHERE "id" = v_hold."api_key_id";

  SELECT "supplier_id" INTO v_supplier_id FROM "offers" WHERE "id" = v_hold."offer_id";
  INSERT INTO "ledger_accounts" ("kind", "owner_id") VALUES ('supplier', v_supplier_id) ON CONFLICT DO NOTHING;
  UPDATE "ledger_accounts" SET "balance_micros" = "balance_micros" + v_supplier_share
  WHERE "kind" = 'supplier' AND "owner_id" = v_supplier_id
  RETURNING "id" INTO v_supplier_account;

  UPDATE "ledger_accounts" SET "balance_micros" = "balance_micros" + v_fee WHERE "id" = c_platform;

  INSERT INTO "completions" ("id", "hold_id", "account_id", "api_key_id", "offer_id", "model_id",
                             "prompt_tokens", "completion_tokens", "usage_estimated", "latency_ms", "created_at",
                             "claimed_prompt_tokens", "claimed_completion_tokens", "usage_disputed")
  VALUES (p_completion_id, v_hold."id", v_hold."account_id", v_hold."api_key_id", v_hold."offer_id", v_hold."model_id",
          p_prompt_tokens, p_completion_tokens, p_usage_estimated, p_latency_ms, p_now,
          p_claimed_prompt_tokens, p_claimed_completion_tokens, p_usage_disputed);

  INSERT INTO "clears" ("completion_id", "offer_id", "model_id", "price_cents", "burn_micro_diem",
                        "charge_micros", "supplier_micros", "fee_micros", "created_at")
  VALUES (p_completion_id, v_hold."offer_id", v_hold."model_id", v_hold."price_cents", v_burn,
          v_charge, v_supplier_share, v_fee, p_now)
  RETURNING "id" INTO v_clear;

  INSERT INTO "journal_entries" ("kind", "clear_id", "created_at") VALUES ('clear', v_clear, p_now)
  RETURNING "id" INTO v_entry;
  -- Zero amounts are left out (a tiny charge can leave the supplier or the platform nothing), as postEntry does.
  INSERT INTO "journal_lines" ("entry_id", "ledger_account_id", "amount_micros")
  SELECT v_entry, l.account, l.amount
  FROM (VALUES (v_buyer_account, -v_charge), (v_supplier_account, v_supplier_share), (c_platform, v_fee)) AS l(account, amount)
  WHERE l.amount <> 0;

  UPDATE "holds" SET "status" = 'cleared', "settled_at" = p_now WHERE "id" = v_hold."id";

  RETURN QUERY SELECT v_charge, v_burn, v_hold."price_cents", v_balance;
END;
$$;
