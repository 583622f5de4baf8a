-- The reservation, before forwarding (lib/router/holds.ts reserveWithKey, through group commit): per item, the key
-- authenticated from its row (a revoked or expired key is refused at once, whatever a process cached), the max price
-- resolved (request, key cap, account default, platform default), the model's list prices read, and the worst case
-- reserved on the cheapest routable offer that serves the request's features (svc_offer_routable,
-- svc_offer_model_serves): its capacity, the buyer's balance and the key's spend (its lifetime total, or its current
-- period's when its limit resets), with the prices and the key's period snapshotted onto the hold. Each item gets its
-- own outcome and none raises: an item it cannot take (a missing value, a negative count, a burn whose charge would
-- not fit a bigint) is 'rejected' alone.
-- Provider preferences (#23): p_prefs[i] is the request's own `provider` object (NULL when it sent none), merged
-- field by field over the key's and then the account's provider_preferences (request over key over account); an item
-- whose merged preferences route as the default does (none, or only sort 'price', require_parameters,
-- allow_fallbacks) runs the default statement, unchanged. Otherwise offers must meet them
-- (svc_offer_preference_miss) and are ordered by the soft preferences (offers meeting preferred_max_latency and
-- preferred_min_throughput first; an offer without figures does not meet them), then by the sort (offer_quality:
-- latency ascending, throughput descending, quality by answer_error_rate ascending, no figures last), then, as always,
-- price-time priority. A request that uses tools or a json_schema format always takes the preferences statement, and
-- offers demoted for their answer checks (offer_quality.answer_demoted) come last for it (#37). The request's
-- own offer ids must name offers: 'invalid_provider_id' (refused_param, refused_value) otherwise, before anything is
-- held (its supplier ids were checked before the statement: lib/market/provider-ids.ts). Every offer must serve the request's size as it declares it
-- (svc_offer_fits_request). A 'no_offer' row carries the merged preferences, for the 503's diagnosis.
-- One row per item: ord, its 1-based position in the arrays, and outcome, one named record per outcome: a JSON object
-- of the fields that outcome has, nothing padded (row_to_json of the outcome's own SELECT; bigints as decimal strings,
-- which JSON numbers cannot carry exactly; lib/router/holds.ts ReserveOutcome reads them by name):
--   {status: 'rejected'} | {status: 'invalid_api_key'} | {status: 'model_not_found'}
--   {status: 'max_price_above_key_cap', KEY}
--   {status: 'invalid_provider_id', KEY, param, id}
--   {status: 'no_offer', KEY, max_price_cents, burn_micro_diem, preferences}
--   {status: 'insufficient_balance' | 'spend_limit_exceeded', KEY, max_price_cents, burn_micro_diem, OFFER}
--   {status: 'ok', KEY, max_price_cents, burn_micro_diem, hold_id, OFFER, upstream_base_url, upstream_key_ciphertext,
--    upstream_model, streams, bills_cancelled_in_full, caches_prompts, sent_prefix}
-- where KEY = api_key_id, account_id, key_max_price_cents, spend_limit_micros and OFFER = offer_id, price_cents,
-- amount_micros (what was, or would have been, reserved on it). row_to_json, not json(b)_build_object: measured at a
-- fifth of the cost per outcome, about what the positional row cost.
-- Prompt caching (issue 40): p_prefixes[i] is the request's prefix chain (lib/router/prompt-prefixes.ts: a JSON array
-- of [hash, estimated tokens], shortest prefix first; NULL: none). When the model has a cache-read price, the longest
-- prefix each caching offer was sent within its retention (prompt_prefixes) is looked up by hash, in this statement;
-- unless the merged preferences say cache_affinity: false, offers are then ordered by their effective prompt price
-- (svc_effective_prompt_micros: the cached part at the cache-read price), an offer holding the prefix first among
-- equals, before price-time priority. The hold snapshots the model's cache-read price when its offer caches; 'ok'
-- answers sent_prefix, the 1-based position of the longest prefix that offer was sent (NULL: none), for the clear's
-- figure of what it sent (svc_cached_prompt_tokens).
-- SET enable_seqscan = off: every row is looked up by key, and a plan made while the tables were nearly empty must
-- not scan them (20261126000000_hot_path_index_plans).
-- SET jit = off: a scan the planner cannot avoid (a small table with no index for its condition) is costed at 10^10
-- once sequential scans are "off", far past jit_above_cost, and PostgreSQL's JIT then compiled (and inlined and
-- optimized) that statement on every execution: 3.7-4.2 ms of PostgreSQL CPU per completion at concurrency 1, where
-- a batch of one pays it alone (issue 25; `EXPLAIN ANALYZE` of such a scan: 228 ms of JIT for 4 rows, cold).
CREATE OR REPLACE FUNCTION "svc_reserve_batch"(
  p_key_hashes text[],
  p_model_ids text[],
  p_requested_max_cents integer[],
  p_prompt_tokens integer[],
  p_output_tokens integer[],
  p_tools boolean[],
  p_json_schema boolean[],
  p_vision boolean[],
  p_prefs jsonb[],
  p_prefixes jsonb[],
  p_default_max_cents integer,
  p_now timestamptz,
  p_expires_at timestamptz
) RETURNS TABLE (ord integer, outcome json)
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
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
  v_period timestamptz;
  v_done boolean;
  v_prefs jsonb;
  v_sort text;
  v_max_latency_ms numeric;
  v_min_tps numeric;
  v_bad record;
  v_offers refcursor;
  v_sent jsonb;
  v_affinity boolean;
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
       OR p_requested_max_cents[i] < 1 OR p_tools[i] IS NULL OR p_json_schema[i] IS NULL OR p_vision[i] IS NULL
       OR jsonb_typeof(p_prefs[i]) <> 'object' OR jsonb_typeof(p_prefixes[i]) <> 'array' THEN
      RETURN QUERY SELECT i, row_to_json(o) FROM (SELECT 'rejected' AS status) o;
      CONTINUE;
    END IF;
    SELECT k."id", k."account_id", k."max_price_cents", k."spend_limit_micros", a."default_max_price_cents",
           k."provider_preferences" AS key_prefs, a."provider_preferences" AS account_prefs
    INTO v_key
    FROM "api_keys" k JOIN "accounts" a ON a."id" = k."account_id"
    WHERE k."key_hash" = p_key_hashes[i] AND k."revoked_at" IS NULL AND (k."expires_at" IS NULL OR k."expires_at" > p_now);
    IF NOT FOUND THEN
      RETURN QUERY SELECT i, row_to_json(o) FROM (SELECT 'invalid_api_key' AS status) o;
      CONTINUE;
    END IF;
    IF p_requested_max_cents[i] IS NOT NULL AND v_key."max_price_cents" IS NOT NULL
       AND p_requested_max_cents[i] > v_key."max_price_cents" THEN
      RETURN QUERY SELECT i, row_to_json(o) FROM (
        SELECT 'max_price_above_key_cap' AS status, v_key."id" AS api_key_id, v_key."account_id" AS account_id,
               v_key."max_price_cents" AS key_max_price_cents, v_key."spend_limit_micros"::text AS spend_limit_micros) o;
      CONTINUE;
    END IF;
    v_max := COALESCE(p_requested_max_cents[i], v_key."max_price_cents", v_key."default_max_price_cents", p_default_max_cents);

    -- The request's own offer ids, each by its primary key (its supplier ids were checked before this statement,
    -- against the process's set of supplier public ids: lib/market/provider-ids.ts; the key's and account's ids when
    -- they were set).
    IF p_prefs[i] ? 'only' OR p_prefs[i] ? 'ignore' THEN
      SELECT f.field, x.id INTO v_bad
      FROM (VALUES (1, 'only'), (2, 'ignore')) AS f(n, field)
      CROSS JOIN LATERAL jsonb_array_elements_text(COALESCE(p_prefs[i] -> f.field, '[]'::jsonb)) WITH ORDINALITY AS x(id, n)
      WHERE CASE WHEN x.id ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                   THEN NOT EXISTS (SELECT 1 FROM "offers" o WHERE o."id" = x.id::uuid)
                 WHEN x.id ~ '^sup_[0-9a-f]{24}$' THEN false
                 ELSE true END
      ORDER BY f.n, x.n
      LIMIT 1;
      IF FOUND THEN
        RETURN QUERY SELECT i, row_to_json(o) FROM (
          SELECT 'invalid_provider_id' AS status, v_key."id" AS api_key_id, v_key."account_id" AS account_id,
                 v_key."max_price_cents" AS key_max_price_cents, v_key."spend_limit_micros"::text AS spend_limit_micros,
                 'provider.' || v_bad.field AS param, v_bad.id AS id) o;
        CONTINUE;
      END IF;
    END IF;
    v_prefs := NULL;
    v_sort := 'price';
    v_affinity := true;
    IF p_prefs[i] IS NOT NULL OR v_key.key_prefs IS NOT NULL OR v_key.account_prefs IS NOT NULL THEN
      v_prefs := COALESCE(v_key.account_prefs, '{}'::jsonb) || COALESCE(v_key.key_prefs, '{}'::jsonb) || COALESCE(p_prefs[i], '{}'::jsonb);
      v_sort := COALESCE(v_prefs ->> 'sort', 'price');
      v_affinity := COALESCE(v_prefs ->> 'cache_affinity', 'true') <> 'false';
      -- Preferences that route as the default does leave the default statement to run.
      IF v_sort = 'price' AND v_prefs - ARRAY['sort', 'require_parameters', 'allow_fallbacks', 'cache_affinity'] = '{}'::jsonb THEN
        v_prefs := NULL;
      END IF;
    END IF;
    -- A request that constrains its answer (tools, a json_schema format) routes to offers demoted for their answer
    -- checks last (offer_quality.answer_demoted, #37): through the statement that reads the routing snapshot.
    IF v_prefs IS NULL AND (p_tools[i] OR p_json_schema[i]) THEN
      v_prefs := '{}'::jsonb;
      v_sort := 'price';
    END IF;
    v_max_latency_ms := (v_prefs ->> 'preferred_max_latency')::numeric * 1000;
    v_min_tps := (v_prefs ->> 'preferred_min_throughput')::numeric;

    SELECT m."input_micro_diem_per_mtok" AS input, m."output_micro_diem_per_mtok" AS output,
           m."cache_read_micro_diem_per_mtok" AS cache_read INTO v_model
    FROM "models" m WHERE m."id" = p_model_ids[i] AND m."active";
    IF NOT FOUND THEN
      RETURN QUERY SELECT i, row_to_json(o) FROM (SELECT 'model_not_found' AS status) o;
      CONTINUE;
    END IF;
    -- The burn, exactly: one whose charge (at up to 10,000 cents per diem) would not fit a bigint refuses this item
    -- alone, never the statement.
    v_burn_exact := svc_burn_micro_diem(p_prompt_tokens[i], p_output_tokens[i], v_model.input, v_model.output);
    IF v_burn_exact > 922337203685477 THEN
      RETURN QUERY SELECT i, row_to_json(o) FROM (SELECT 'rejected' AS status) o;
      CONTINUE;
    END IF;
    v_burn := v_burn_exact::bigint;

    -- The longest prefix of this request each caching offer was sent within its retention: {offer id: [position, tokens]}.
    v_sent := NULL;
    IF p_prefixes[i] IS NOT NULL AND v_model.cache_read IS NOT NULL THEN
      SELECT jsonb_object_agg(s.offer_id::text, jsonb_build_array(s.n, s.tokens)) INTO v_sent
      FROM (
        SELECT DISTINCT ON (pp."offer_id") pp."offer_id", x.n, LEAST((x.e ->> 1)::bigint, p_prompt_tokens[i]) AS tokens
        FROM jsonb_array_elements(p_prefixes[i]) WITH ORDINALITY AS x(e, n)
        JOIN "prompt_prefixes" pp ON pp."hash" = x.e ->> 0 AND pp."expires_at" > p_now
        JOIN "offers" po ON po."id" = pp."offer_id" AND po."caches_prompts"
          AND pp."sent_at" > p_now - make_interval(secs => po."cache_retention_seconds")
        ORDER BY pp."offer_id", x.n DESC
      ) s;
    END IF;
    v_affinity := v_affinity AND v_sent IS NOT NULL;

    v_done := false;
    -- The offers in routing order, through one of two static statements (each planned once per connection): the
    -- default one, or the one that applies preferences (and cache affinity).
    IF v_prefs IS NULL AND NOT v_affinity THEN
      OPEN v_offers FOR
        SELECT o."id", o."price_cents", o."daily_capacity_micro_diem",
               o."upstream_base_url", o."upstream_key_ciphertext", om."upstream_model", o."streams", o."bills_cancelled_in_full",
               o."caches_prompts"
        FROM "offers" o
        JOIN "offer_models" om ON om."offer_id" = o."id" AND om."model_id" = p_model_ids[i]
          AND svc_offer_model_serves(om."supports_tools", om."supports_json_schema", om."supports_vision",
                                     p_tools[i], p_json_schema[i], p_vision[i])
        LEFT JOIN "offer_days" d ON d."offer_id" = o."id" AND d."day" = v_day
        WHERE svc_offer_routable(o."status", o."unhealthy_until", o."probe_delisted", o."price_cents", o."daily_capacity_micro_diem",
                                 d."burned_micro_diem", d."held_micro_diem", v_max, v_burn, p_now)
          AND svc_offer_fits_request(o."context_tokens", o."max_output_tokens", p_prompt_tokens[i], p_output_tokens[i])
        ORDER BY o."price_cents", o."created_at", o."id";
    ELSE
      OPEN v_offers FOR
        SELECT o."id", o."price_cents", o."daily_capacity_micro_diem",
               o."upstream_base_url", o."upstream_key_ciphertext", om."upstream_model", o."streams", o."bills_cancelled_in_full",
               o."caches_prompts"
        FROM "offers" o
        JOIN "offer_models" om ON om."offer_id" = o."id" AND om."model_id" = p_model_ids[i]
          AND svc_offer_model_serves(om."supports_tools", om."supports_json_schema", om."supports_vision",
                                     p_tools[i], p_json_schema[i], p_vision[i])
        LEFT JOIN "offer_days" d ON d."offer_id" = o."id" AND d."day" = v_day
        LEFT JOIN "offer_quality" q ON q."offer_id" = o."id"
        WHERE svc_offer_routable(o."status", o."unhealthy_until", o."probe_delisted", o."price_cents", o."daily_capacity_micro_diem",
                                 d."burned_micro_diem", d."held_micro_diem", v_max, v_burn, p_now)
          AND svc_offer_fits_request(o."context_tokens", o."max_output_tokens", p_prompt_tokens[i], p_output_tokens[i])
          AND svc_offer_preference_miss(v_prefs, o."id", o."supplier_id", o."quantization"::text, o."retains_prompts",
                                        o."trains_on_prompts", o."bills_cancelled_in_full", o."price_cents", v_model.input,
                                        v_model.output, o."probe_status"::text) IS NULL
        ORDER BY
          CASE WHEN (p_tools[i] OR p_json_schema[i]) AND q."answer_demoted" THEN 1 ELSE 0 END,
          (CASE WHEN v_max_latency_ms IS NOT NULL AND NOT COALESCE(q."latency_p50_ms" <= v_max_latency_ms, false) THEN 1 ELSE 0 END
           + CASE WHEN v_min_tps IS NOT NULL AND NOT COALESCE(q."throughput_tps" >= v_min_tps, false) THEN 1 ELSE 0 END),
          CASE WHEN v_sort = 'latency' THEN q."latency_p50_ms" END ASC NULLS LAST,
          CASE WHEN v_sort = 'throughput' THEN q."throughput_tps" END DESC NULLS LAST,
          CASE WHEN v_sort = 'quality' THEN q."answer_error_rate" END ASC NULLS LAST,
          CASE WHEN v_affinity THEN svc_effective_prompt_micros(p_prompt_tokens[i], CASE WHEN o."caches_prompts" THEN (v_sent -> o."id"::text ->> 1)::bigint END,
                                                                v_model.input, v_model.cache_read, o."price_cents") END,
          CASE WHEN v_affinity AND o."caches_prompts" AND v_sent ? o."id"::text THEN 0 ELSE 1 END,
          o."price_cents", o."created_at", o."id";
    END IF;
    LOOP
      FETCH v_offers INTO v_offer;
      EXIT WHEN NOT FOUND;
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
        RETURN QUERY SELECT i, row_to_json(o) FROM (
          SELECT 'insufficient_balance' AS status, v_key."id" AS api_key_id, v_key."account_id" AS account_id,
                 v_key."max_price_cents" AS key_max_price_cents, v_key."spend_limit_micros"::text AS spend_limit_micros,
                 v_max AS max_price_cents, v_burn::text AS burn_micro_diem,
                 v_offer."id" AS offer_id, v_offer."price_cents" AS price_cents, v_charge::text AS amount_micros) o;
        EXIT;
      END IF;

      -- The key's limit: a lifetime limit holds its total spend, a resetting one (limit_reset) its current period's,
      -- where a counter of a period that has passed counts as 0 and starts again here (svc_key_period_spent_micros).
      -- One conditional UPDATE either way, re-checked on the latest row by concurrent reservations.
      UPDATE "api_keys"
      SET "spent_micros" = "spent_micros" + v_charge,
          "period_spent_micros" = CASE WHEN "limit_reset" IS NULL THEN "period_spent_micros"
            ELSE svc_key_period_spent_micros("limit_reset", "period_start", "period_spent_micros", p_now) + v_charge END,
          "period_start" = CASE WHEN "limit_reset" IS NULL THEN "period_start"
            ELSE GREATEST("period_start", svc_key_period_start("limit_reset", p_now)) END
      WHERE "id" = v_key."id"
        AND ("spend_limit_micros" IS NULL
             OR CASE WHEN "limit_reset" IS NULL THEN "spent_micros"
                     ELSE svc_key_period_spent_micros("limit_reset", "period_start", "period_spent_micros", p_now) END
                + v_charge <= "spend_limit_micros")
      RETURNING CASE WHEN "limit_reset" IS NULL THEN NULL ELSE "period_start" END INTO v_period;
      IF NOT FOUND THEN
        UPDATE "offer_days" SET "held_micro_diem" = "held_micro_diem" - v_burn WHERE "offer_id" = v_offer."id" AND "day" = v_day;
        UPDATE "ledger_accounts" SET "held_micros" = "held_micros" - v_charge
        WHERE "kind" = 'buyer' AND "owner_id" = v_key."account_id";
        RETURN QUERY SELECT i, row_to_json(o) FROM (
          SELECT 'spend_limit_exceeded' AS status, v_key."id" AS api_key_id, v_key."account_id" AS account_id,
                 v_key."max_price_cents" AS key_max_price_cents, v_key."spend_limit_micros"::text AS spend_limit_micros,
                 v_max AS max_price_cents, v_burn::text AS burn_micro_diem,
                 v_offer."id" AS offer_id, v_offer."price_cents" AS price_cents, v_charge::text AS amount_micros) o;
        EXIT;
      END IF;

      -- A time-ordered id (svc_uuid_v7): the hold lands at its indexes' right edge.
      INSERT INTO "holds" ("id", "account_id", "api_key_id", "offer_id", "model_id", "day", "price_cents",
                           "amount_micros", "burn_micro_diem", "expires_at", "created_at",
                           "input_micro_diem_per_mtok", "output_micro_diem_per_mtok", "key_period_start",
                           "cache_read_micro_diem_per_mtok")
      VALUES (svc_uuid_v7(), v_key."account_id", v_key."id", v_offer."id", p_model_ids[i], v_day, v_offer."price_cents",
              v_charge, v_burn, p_expires_at, p_now, v_model.input, v_model.output, v_period,
              CASE WHEN v_offer."caches_prompts" THEN v_model.cache_read END)
      RETURNING "id" INTO v_hold;

      RETURN QUERY SELECT i, row_to_json(o) FROM (
        SELECT 'ok' AS status, v_key."id" AS api_key_id, v_key."account_id" AS account_id,
               v_key."max_price_cents" AS key_max_price_cents, v_key."spend_limit_micros"::text AS spend_limit_micros,
               v_max AS max_price_cents, v_burn::text AS burn_micro_diem, v_hold AS hold_id,
               v_offer."id" AS offer_id, v_offer."price_cents" AS price_cents, v_charge::text AS amount_micros,
               v_offer."upstream_base_url" AS upstream_base_url, v_offer."upstream_key_ciphertext" AS upstream_key_ciphertext,
               v_offer."upstream_model" AS upstream_model, v_offer."streams" AS streams,
               v_offer."bills_cancelled_in_full" AS bills_cancelled_in_full,
               v_offer."caches_prompts" AND v_model.cache_read IS NOT NULL AS caches_prompts,
               CASE WHEN v_offer."caches_prompts" THEN (v_sent -> v_offer."id"::text ->> 0)::integer END AS sent_prefix) o;
      EXIT;
    END LOOP;
    CLOSE v_offers;

    IF NOT v_done THEN
      RETURN QUERY SELECT i, row_to_json(o) FROM (
        SELECT 'no_offer' AS status, v_key."id" AS api_key_id, v_key."account_id" AS account_id,
               v_key."max_price_cents" AS key_max_price_cents, v_key."spend_limit_micros"::text AS spend_limit_micros,
               v_max AS max_price_cents, v_burn::text AS burn_micro_diem, v_prefs AS preferences) o;
    END IF;
  END LOOP;
END;
$$;
