-- The clear, after forwarding (lib/router/holds.ts clearCompletion, through group commit), set-based: a fixed number
-- of statements per batch whatever its size (20261125000000_clear_set_based). p_items: one svc_clear_item per
-- completion (20261205000000_clear_items; its fields, by name, are what a completion's record keeps). Each active hold
-- is metered at the prices it snapshotted (svc_metered_charge: the burn capped at the reserved burn, its charge at the
-- reserved amount, the rule a probe's settle applies too), split between supplier and platform (svc_supplier_micros,
-- svc_fee_micros), and cleared: the offer day's burn, the buyer's balance, the key's spend and the earnings are each
-- written once with the sums of the batch, the records (completion, clear, journal entry and its lines, balanced per
-- clear) inserted by one statement each. Then, outside the money statements, each in a function of its own: the served
-- offers' failure streak ends (svc_record_offer_success) and the answers are measured (svc_record_offer_answers:
-- offer_stats, per offer and 5-minute bucket). Tables are locked once each, in one order: holds, offer days, balances,
-- keys, earnings, offers, offer stats (the failure report locks an offer, then its stats, too). An item that cannot be
-- cleared (a count out of range, a completion id missing, used or repeated, an end_reason not a completion_end) is
-- 'rejected' alone and never fails the batch.
-- status: 'ok' | 'not_active' (no active hold with its prices: not found, already cleared or released, or reserved
-- before holds carried prices; nothing done) | 'rejected' (the item itself cannot be cleared: nothing done; its hold
-- stays active for the caller to release).
-- An 'ok' row carries the clear's own numbers, the ones its journal entry holds (charge = the buyer's line, supplier
-- share and fee = the other two), so the answer can state them to the micro-unit (usage.cost_details,
-- 20261128010000_generations). latency_ms is the upstream's latency (forward sent to answer read), stored as
-- completions.latency_ms; total_latency_ms is the request's own, from its arrival to this clear's submission.
-- claimed_reasoning_tokens is the upstream's reasoning claim (any size, stored clamped; NULL: none reported),
-- reasoning_tokens the reasoning tokens billed, within completion_tokens (20261202000000_reasoning_claims). end_reason
-- and streamed say how the answer ended and whether it was streamed (completions.end_reason, .streamed);
-- responses_api whether the buyer was given a resp_ id, and counted_* / reasoning_bound_tokens svc's own count beside
-- the claim (20261216020000_completion_record; stored clamped).
-- Prompt caching (issue 40): the prompt tokens billed at the hold's cache-read price are svc_cached_prompt_tokens (the
-- larger of the upstream's claim and svc's figure of the prefix it sent that offer within its retention; none when the
-- hold has no cache price: the offer does not cache), answered as cached_tokens (NULL when the offer does not cache);
-- and an item's prefix hashes are recorded for its offer when the offer caches (prompt_prefixes, each kept its
-- retention from now), after the money rows, in (hash, offer) order.
-- SET enable_seqscan = off, SET jit = off: see svc_reserve_batch.
CREATE OR REPLACE FUNCTION "svc_clear_batch"(
  p_items svc_clear_item[],
  p_fee_bps integer,
  p_now timestamptz,
  p_platform_shard integer
) RETURNS TABLE (
  ord integer,
  status text,
  charge_micros bigint,
  burn_micro_diem bigint,
  price_cents integer,
  balance_micros bigint,
  supplier_micros bigint,
  fee_micros bigint,
  cached_tokens bigint
)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
  v_platform uuid := svc_platform_shard(p_platform_shard);
  v_ok boolean[];             -- per item: it can be cleared at all (else 'rejected')
  v_ends text[] := enum_range(NULL::completion_end)::text[];  -- the endings a completion may record (read once a batch)
  -- One element per hold cleared.
  c_n integer[];              -- the item's position in p_items (its ord)
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
  c_disputed boolean[];       -- the item's usage_disputed, latency_ms and completion_tokens (for the offer's figures)
  c_latency bigint[];
  c_tokens bigint[];
  c_cached bigint[];          -- prompt tokens billed at the cache-read price (NULL: the offer does not cache)
  -- One element per buyer: its ledger account and its balance after this batch.
  b_owner uuid[];
  b_account uuid[];
  b_balance bigint[];
BEGIN
  -- 0. Items that cannot be cleared whatever their hold (a count out of range or missing, a completion id missing,
  --    already used or given earlier in this batch, an ending not one of the four) are refused one by one, so that
  --    they never fail the statement and with it the rest of the batch. Claims are the supplier's numbers: any size
  --    is taken, and stored clamped.
  SELECT array_agg(v.ok ORDER BY v.n) INTO v_ok
  FROM (
    SELECT i.ordinality AS n, COALESCE(
             i.completion_id IS NOT NULL
             AND i.prompt_tokens BETWEEN 0 AND 2147483647
             AND i.completion_tokens BETWEEN 0 AND 2147483647
             AND i.latency_ms BETWEEN 0 AND 2147483647
             AND i.total_latency_ms BETWEEN 0 AND 2147483647
             AND COALESCE(i.claimed_prompt_tokens, 0) >= 0
             AND COALESCE(i.claimed_completion_tokens, 0) >= 0
             AND COALESCE(i.claimed_reasoning_tokens, 0) >= 0
             AND COALESCE(i.claimed_cached_tokens, 0) >= 0
             AND COALESCE(i.sent_cached_tokens, 0) BETWEEN 0 AND 2147483647
             AND COALESCE(i.reasoning_tokens BETWEEN 0 AND i.completion_tokens, true)
             AND i.usage_estimated IS NOT NULL AND i.usage_disputed IS NOT NULL
             AND i.end_reason = ANY(v_ends)
             AND i.streamed IS NOT NULL
             AND row_number() OVER (PARTITION BY i.completion_id ORDER BY i.ordinality) = 1
             AND used."id" IS NULL,
           false) AS ok
    FROM unnest(p_items) WITH ORDINALITY AS i
    -- Each id looked up by key (a LATERAL with a LIMIT stays a nested loop). As a NOT EXISTS in the select list the
    -- planner may hash the whole table instead, and it did while completions was small (a few thousand rows, a
    -- fresh market's): every clear read every completion.
    LEFT JOIN LATERAL (SELECT c."id" FROM "completions" c WHERE c."id" = i.completion_id LIMIT 1) used ON true
  ) v;

  -- 1. Lock the batch's holds in id order (a hold id given twice counts at its first position), keep the active
  --    ones and meter them at their own prices. The status is compared as text so that the holds are looked up by
  --    id: a status index scan would read every active hold. It is checked on the locked (latest) row.
  SELECT array_agg(m.n), array_agg(m.id), array_agg(m.account_id), array_agg(m.api_key_id), array_agg(m.offer_id),
         array_agg(m.day), array_agg(m.model_id), array_agg(m.price), array_agg(m.amount), array_agg(m.reserved_burn),
         array_agg(m.burn), array_agg(m.charge), array_agg(s.share), array_agg(s.fee), array_agg(sa."id"),
         array_agg(m.usage_disputed), array_agg(m.latency_ms), array_agg(m.completion_tokens), array_agg(m.cached)
  INTO c_n, c_hold, c_account, c_key, c_offer, c_day, c_model, c_price, c_amount, c_reserved_burn,
       c_burn, c_charge, c_share, c_fee, c_supplier, c_disputed, c_latency, c_tokens, c_cached
  -- The split is computed outside the locked subquery, from its charge column: svc_fee_micros names its charge twice
  -- and is inlined only for an argument that cheap (as the whole capped charge, it was called and planned per batch).
  FROM (
    SELECT u.n, u.usage_disputed, u.latency_ms, u.completion_tokens,
           CASE WHEN h."cache_read_micro_diem_per_mtok" IS NOT NULL THEN ca.cached END AS cached,
           h."id", h."account_id", h."api_key_id", h."offer_id", h."day", h."model_id",
           h."price_cents" AS price, h."amount_micros" AS amount, h."burn_micro_diem" AS reserved_burn,
           mc.burn_micro_diem AS burn, mc.charge_micros AS charge
    FROM "holds" h
    JOIN (SELECT DISTINCT ON (i.hold_id) i.hold_id, i.ordinality::integer AS n, i.prompt_tokens, i.completion_tokens,
                 i.usage_disputed, i.latency_ms, i.claimed_cached_tokens, i.sent_cached_tokens
          FROM unnest(p_items) WITH ORDINALITY AS i WHERE v_ok[i.ordinality] ORDER BY i.hold_id, i.ordinality) u
      ON u.hold_id = h."id"
    CROSS JOIN LATERAL (SELECT svc_cached_prompt_tokens(u.prompt_tokens, u.claimed_cached_tokens, u.sent_cached_tokens,
                                                        h."cache_read_micro_diem_per_mtok" IS NOT NULL) AS cached) ca
    CROSS JOIN LATERAL svc_metered_charge(u.prompt_tokens, ca.cached, u.completion_tokens, h."input_micro_diem_per_mtok",
                                          h."cache_read_micro_diem_per_mtok", h."output_micro_diem_per_mtok",
                                          h."price_cents", h."burn_micro_diem", h."amount_micros") mc
    WHERE h."status"::text = 'active'
      AND h."input_micro_diem_per_mtok" IS NOT NULL AND h."output_micro_diem_per_mtok" IS NOT NULL
    ORDER BY h."id"
    FOR UPDATE OF h
  ) m
  CROSS JOIN LATERAL (SELECT svc_supplier_micros(m.charge, p_fee_bps) AS share, svc_fee_micros(m.charge, p_fee_bps) AS fee) s
  JOIN "offers" o ON o."id" = m.offer_id
  LEFT JOIN "ledger_accounts" sa ON sa."kind" = 'supplier' AND sa."owner_id" = o."supplier_id";

  IF c_n IS NOT NULL THEN
    -- 2. Offer days: burn, release the reserved burn, count the clears and add the supplier's share, once per
    --    (offer, day).
    WITH a AS (
      SELECT i.offer_id, i.day, SUM(i.reserved_burn)::bigint AS reserved_burn, SUM(i.burn)::bigint AS burn,
             COUNT(*)::integer AS n, (COUNT(*) FILTER (WHERE i.disputed))::integer AS disputed,
             SUM(i.share)::bigint AS earned
      FROM unnest(c_offer, c_day, c_reserved_burn, c_burn, c_disputed, c_share) AS i(offer_id, day, reserved_burn, burn, disputed, share)
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
        "disputed_clears" = d."disputed_clears" + a.disputed,
        "earned_micros" = d."earned_micros" + a.earned
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

    -- 4. Keys: the spend reserved becomes the spend charged, once per key. The period's counter gets the unused part
    --    of a hold back only while it still counts the period the hold was reserved in (holds.key_period_start, read
    --    from the holds locked in step 1): a hold that straddles the reset counts against its own period, and the new
    --    period starts at 0.
    WITH a AS (
      SELECT i.api_key_id, SUM(i.amount)::bigint AS amount, SUM(i.charge)::bigint AS charge,
             array_agg(h."key_period_start") AS periods, array_agg(i.amount - i.charge) AS unused
      FROM unnest(c_key, c_amount, c_charge, c_hold) AS i(api_key_id, amount, charge, hold_id)
      JOIN "holds" h ON h."id" = i.hold_id
      GROUP BY i.api_key_id
    ), locked AS MATERIALIZED (
      SELECT k."id" FROM "api_keys" k JOIN a ON a.api_key_id = k."id"
      ORDER BY k."id"
      FOR NO KEY UPDATE OF k
    )
    UPDATE "api_keys" k
    SET "spent_micros" = k."spent_micros" - a.amount + a.charge, "last_used_at" = p_now,
        "period_spent_micros" = k."period_spent_micros"
          - COALESCE((SELECT SUM(u.unused) FROM unnest(a.periods, a.unused) AS u(period, unused) WHERE u.period = k."period_start"), 0)::bigint
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
    --    without joining on RETURNING, and time-ordered (svc_uuid_v7: each lands at its index's right edge).
    WITH item AS MATERIALIZED (
      SELECT c.*, i.completion_id, i.prompt_tokens, i.completion_tokens, i.usage_estimated, i.latency_ms,
             i.claimed_prompt_tokens, i.claimed_completion_tokens, i.usage_disputed, i.total_latency_ms,
             i.finish_reason, i.claimed_reasoning_tokens, i.reasoning_tokens, i.end_reason, i.streamed,
             i.responses_api, i.counted_prompt_tokens, i.counted_completion_tokens, i.reasoning_bound_tokens,
             i.claimed_cached_tokens, b.account AS buyer, svc_uuid_v7() AS clear_id, svc_uuid_v7() AS entry_id
      FROM unnest(c_n, c_hold, c_account, c_key, c_offer, c_model, c_price, c_burn, c_charge, c_share, c_fee, c_supplier, c_cached)
        AS c(n, hold_id, account_id, api_key_id, offer_id, model_id, price, burn, charge, share, fee, supplier, cached)
      JOIN unnest(p_items) WITH ORDINALITY AS i ON i.ordinality = c.n
      LEFT JOIN unnest(b_owner, b_account) AS b(owner_id, account) ON b.owner_id = c.account_id
    ),
    new_completions AS (
      INSERT INTO "completions" ("id", "hold_id", "account_id", "api_key_id", "offer_id", "model_id",
                                 "prompt_tokens", "completion_tokens", "usage_estimated", "latency_ms", "created_at",
                                 "claimed_prompt_tokens", "claimed_completion_tokens", "usage_disputed",
                                 "total_latency_ms", "finish_reason", "claimed_reasoning_tokens", "reasoning_tokens",
                                 "end_reason", "streamed", "responses_api", "counted_prompt_tokens",
                                 "counted_completion_tokens", "reasoning_bound_tokens", "cached_tokens",
                                 "claimed_cached_tokens")
      SELECT t.completion_id, t.hold_id, t.account_id, t.api_key_id, t.offer_id, t.model_id,
             t.prompt_tokens, t.completion_tokens, t.usage_estimated, t.latency_ms, p_now,
             -- LEAST ignores NULL: a missing claim must stay NULL, not become the column's largest value.
             CASE WHEN t.claimed_prompt_tokens IS NOT NULL THEN LEAST(t.claimed_prompt_tokens, 2147483647) END,
             CASE WHEN t.claimed_completion_tokens IS NOT NULL THEN LEAST(t.claimed_completion_tokens, 2147483647) END,
             t.usage_disputed, t.total_latency_ms, left(t.finish_reason, 32),
             CASE WHEN t.claimed_reasoning_tokens IS NOT NULL THEN LEAST(t.claimed_reasoning_tokens, 2147483647) END,
             t.reasoning_tokens, t.end_reason::completion_end, t.streamed, COALESCE(t.responses_api, false),
             CASE WHEN t.counted_prompt_tokens IS NOT NULL THEN LEAST(t.counted_prompt_tokens, 2147483647) END,
             CASE WHEN t.counted_completion_tokens IS NOT NULL THEN LEAST(t.counted_completion_tokens, 2147483647) END,
             CASE WHEN t.reasoning_bound_tokens IS NOT NULL THEN LEAST(t.reasoning_bound_tokens, 2147483647) END,
             t.cached,
             CASE WHEN t.claimed_cached_tokens IS NOT NULL THEN LEAST(t.claimed_cached_tokens, 2147483647) END
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

    -- 6b. The prefixes forwarded to caching offers, kept for the offer's retention from now (never shortened).
    IF EXISTS (SELECT 1 FROM unnest(p_items) AS i WHERE i.prefix_hashes IS NOT NULL) THEN
      INSERT INTO "prompt_prefixes" ("hash", "offer_id", "sent_at", "expires_at")
      SELECT DISTINCT ON (x.hash, o."id") x.hash, o."id", p_now, p_now + make_interval(secs => o."cache_retention_seconds")
      FROM unnest(c_n, c_offer) AS c(n, offer_id)
      JOIN unnest(p_items) WITH ORDINALITY AS i ON i.ordinality = c.n
      JOIN "offers" o ON o."id" = c.offer_id AND o."caches_prompts"
      CROSS JOIN LATERAL unnest(string_to_array(i.prefix_hashes, ' ')) AS x(hash)
      WHERE i.prefix_hashes IS NOT NULL AND x.hash <> ''
      ORDER BY x.hash, o."id"
      ON CONFLICT ("hash", "offer_id") DO UPDATE
        SET "sent_at" = EXCLUDED."sent_at", "expires_at" = GREATEST("prompt_prefixes"."expires_at", EXCLUDED."expires_at");
    END IF;

    -- 7. Health, after every money row: a served completion ends its offer's failure streak.
    PERFORM svc_record_offer_success(c_offer, p_now);

    -- 8. Quality, last (after the offers: the failure report locks an offer's row before its stats row): each answer
    --    measured into its offer's 5-minute bucket, by its buyer (its own supplier's are not measured).
    PERFORM svc_record_offer_answers(c_offer, c_account, c_latency, c_tokens, c_disputed, p_now);
  END IF;

  -- One row per item.
  RETURN QUERY
  SELECT u.n::integer, CASE WHEN c.n IS NOT NULL THEN 'ok' WHEN v_ok[u.n] THEN 'not_active' ELSE 'rejected' END,
         c.charge, c.burn, c.price, b.balance, c.share, c.fee, c.cached
  FROM generate_series(1, COALESCE(cardinality(p_items), 0)) AS u(n)
  LEFT JOIN unnest(c_n, c_charge, c_burn, c_price, c_account, c_share, c_fee, c_cached)
    AS c(n, charge, burn, price, account_id, share, fee, cached)
    ON c.n = u.n
  LEFT JOIN unnest(b_owner, b_balance) AS b(owner_id, balance) ON b.owner_id = c.account_id
  ORDER BY u.n;
END;
$$;
