import "server-only";
import { randomInt } from "node:crypto";
import { db } from "@/lib/db/client";
import { compositeArrayLiteral, type CompositeField } from "@/lib/db/composite-literal";
import { preparedQuery } from "@/lib/db/pool";
import { env } from "@/lib/env";
import { onCleared, onReleased, onReserved } from "@/lib/ops/hot-path-hooks";
import { processState } from "@/lib/process-state";
import type { Features } from "@/lib/supply/features";
import { GroupCommit } from "@/lib/router/group-commit";
import type { ProviderPreferences } from "@/lib/market/provider-schemas";
import type { CompletionEnd } from "@/lib/router/schemas";
import type { FinishReason } from "@/lib/upstream/answer";

export type { CompletionEnd } from "@/lib/router/schemas";

/**
 * Thin wrappers over the hot-path SQL functions (prisma/functions/: svc_reserve_batch, svc_clear_batch,
 * svc_release_hold; the money and routing rules they apply are the small SQL functions beside them): each is one round
 * trip and one transaction, which is what keeps the completion path exact under concurrency. The route's path
 * (reserveWithKey, clearCompletion) goes over `pg` directly (lib/db/pool.ts) through group commit
 * (lib/router/group-commit.ts): the completions that arrive while the previous batch is in flight share the next
 * statement, each row with its own outcome. An item the statement cannot take (a count out of range, a completion id
 * already used) is refused alone ('rejected') and never fails the rest of its batch; numbers are checked here first as
 * well, so one never reaches SQL out of range.
 */

/** The offer's upstream as the reservation read it, with what its supplier declares about streaming. */
export type Upstream = { baseUrl: string; keyCiphertext: string; model: string; streams: boolean; billsCancelledInFull: boolean };

/**
 * The clear's numbers as its own statement computed and posted them: chargeMicros is the buyer's journal line,
 * supplierMicros and feeMicros the supplier's and the platform's, so they add up to the charge exactly.
 */
export type ClearResult = {
  chargeMicros: bigint;
  supplierMicros: bigint;
  feeMicros: bigint;
  burnMicroDiem: bigint;
  priceCents: number;
  balanceMicros: bigint;
  /** The prompt tokens billed at the cache-read price (svc_cached_prompt_tokens); null when the offer does not cache. */
  cachedTokens: number | null;
};

export type ClearInput = {
  holdId: string;
  completionId: string;
  promptTokens: number;
  completionTokens: number;
  usageEstimated: boolean;
  /**
   * What the upstream claimed (null when it sent no usage: any size, stored clamped to the column) and whether it
   * exceeded our count beyond the tolerance.
   */
  claimed: { promptTokens: number; completionTokens: number; reasoningTokens: number | null } | null;
  /** The reasoning tokens billed, within completionTokens (completions.reasoning_tokens); null when none were reported. */
  reasoningTokens: number | null;
  usageDisputed: boolean;
  /** The upstream's latency: from the forward sent to its answer read (completions.latency_ms). */
  latencyMs: number;
  /** The request's own latency, from its arrival to this clear's submission (completions.total_latency_ms). */
  totalLatencyMs: number;
  /** The finish_reason the buyer gets (completions.finish_reason). */
  finishReason: FinishReason;
  /**
   * How the answer ended (completions.end_reason): read whole ("completed", the default), or a stream cut short by the
   * buyer hanging up, by the upstream's error or by a deadline, billed for what was delivered.
   */
  endReason?: CompletionEnd;
  /** The answer was streamed to the buyer (completions.streamed); default false. */
  streamed?: boolean;
  /**
   * Prompt caching (issue 40): the upstream's cached-token claim (null: none), svc's count of the prefix it sent this
   * offer within its retention (null: none), and the request's prefix hashes to record for a caching offer (null: none).
   */
  claimedCachedTokens?: number | null;
  sentCachedTokens?: number | null;
  prefixHashes?: string | null;
  /** The buyer was given a POST /v1/responses response, resp_… (completions.responses_api); default false. */
  responsesApi?: boolean;
  /** svc's own count beside the claim (completions.counted_*, reasoning_bound_tokens); null on each when not known. */
  counted?: { promptTokens: number; completionTokens: number; reasoningBoundTokens: number | null };
  now?: Date;
};

/**
 * Clears one completion and records the offer's success, in one statement shared with the clears that arrive
 * while the previous batch is in flight (svc_clear_batch). The tokens are metered at the prices the hold snapshotted.
 * balanceMicros is the buyer's balance after the whole batch (its other clears in the same batch included).
 */
export async function clearCompletion(input: ClearInput): Promise<ClearResult> {
  assertCount(input.promptTokens, "promptTokens");
  assertCount(input.completionTokens, "completionTokens");
  if (input.reasoningTokens !== null) {
    assertCount(input.reasoningTokens, "reasoningTokens");
    if (input.reasoningTokens > input.completionTokens) throw new Error("clear: reasoningTokens beyond completionTokens");
  }
  if (input.claimed) {
    assertClaim(input.claimed.promptTokens, "claimed.promptTokens");
    assertClaim(input.claimed.completionTokens, "claimed.completionTokens");
    if (input.claimed.reasoningTokens !== null) assertClaim(input.claimed.reasoningTokens, "claimed.reasoningTokens");
  }
  const row = await clears().submit({ ...input, latencyMs: asLatency(input.latencyMs), totalLatencyMs: asLatency(input.totalLatencyMs) });
  if (row.status === "rejected")
    throw new Error(`the clear of hold ${input.holdId} was refused by the database (its completion id or counts)`);
  if (row.status !== "ok") throw new Error(`hold ${input.holdId} is not active`);
  onCleared(input.holdId, BigInt(row.charge_micros!));
  return {
    chargeMicros: BigInt(row.charge_micros!),
    supplierMicros: BigInt(row.supplier_micros!),
    feeMicros: BigInt(row.fee_micros!),
    burnMicroDiem: BigInt(row.burn_micro_diem!),
    priceCents: Number(row.price_cents),
    balanceMicros: BigInt(row.balance_micros!),
    cachedTokens: row.cached_tokens === null ? null : Number(row.cached_tokens),
  };
}

type ClearRow = {
  ord: number;
  status: string;
  charge_micros: string | null;
  burn_micro_diem: string | null;
  price_cents: number | null;
  balance_micros: string | null;
  supplier_micros: string | null;
  fee_micros: string | null;
  cached_tokens: string | null;
};

/** Clears waiting for the next clear batch (a diagnostic; tests use it to know a batch has formed). */
export function queuedClears(): number {
  return batchers.clear?.queued ?? 0;
}

function clears(): GroupCommit<ClearInput, ClearRow> {
  return (batchers.clear ??= new GroupCommit(runClearBatch, { maxBatch: 256, maxInFlight: 1, isolatable: refusedByDatabase }));
}

async function runClearBatch(items: ClearInput[]): Promise<ClearRow[]> {
  const batch = { feeBps: env.PLATFORM_FEE_BPS, now: items[0].now ?? new Date(), platformShard: randomInt(PLATFORM_SHARDS) };
  const rows = await withRetry(() => preparedQuery<ClearRow>({ name: "svc_clear_batch", ...clearBatchQuery(items, batch) }));
  return byOrd(rows.rows, items.length);
}

/**
 * svc_clear_batch's statement for a batch: each item one svc_clear_item (prisma/migrations/20261205000000_clear_items),
 * its fields named here and nowhere else (clearItem), sent as one array literal of the type in its field order
 * (CLEAR_ITEM_FIELDS, checked against the database's type by tests/integration/clear-batch.test.ts).
 */
export function clearBatchQuery(
  items: ClearInput[],
  batch: { feeBps: number; now: Date; platformShard: number },
): { text: string; values: unknown[] } {
  const rows = items.map((item) => {
    const named = clearItem(item);
    return CLEAR_ITEM_FIELDS.map((field) => named[field]);
  });
  return { text: CLEAR_SQL, values: [compositeArrayLiteral(rows), batch.feeBps, batch.now.toISOString(), batch.platformShard] };
}

/** svc_clear_item's fields, in the type's order. */
export const CLEAR_ITEM_FIELDS = [
  "hold_id",
  "completion_id",
  "prompt_tokens",
  "completion_tokens",
  "reasoning_tokens",
  "usage_estimated",
  "usage_disputed",
  "claimed_prompt_tokens",
  "claimed_completion_tokens",
  "claimed_reasoning_tokens",
  "latency_ms",
  "total_latency_ms",
  "finish_reason",
  "end_reason",
  "streamed",
  "claimed_cached_tokens",
  "sent_cached_tokens",
  "prefix_hashes",
  "responses_api",
  "counted_prompt_tokens",
  "counted_completion_tokens",
  "reasoning_bound_tokens",
] as const;

function clearItem(i: ClearInput): Record<(typeof CLEAR_ITEM_FIELDS)[number], CompositeField> {
  return {
    hold_id: i.holdId,
    completion_id: i.completionId,
    prompt_tokens: i.promptTokens,
    completion_tokens: i.completionTokens,
    reasoning_tokens: i.reasoningTokens,
    usage_estimated: i.usageEstimated,
    usage_disputed: i.usageDisputed,
    claimed_prompt_tokens: i.claimed?.promptTokens ?? null,
    claimed_completion_tokens: i.claimed?.completionTokens ?? null,
    claimed_reasoning_tokens: i.claimed?.reasoningTokens ?? null,
    latency_ms: i.latencyMs,
    total_latency_ms: i.totalLatencyMs,
    finish_reason: i.finishReason,
    end_reason: i.endReason ?? "completed",
    streamed: i.streamed ?? false,
    claimed_cached_tokens: i.claimedCachedTokens ?? null,
    sent_cached_tokens: i.sentCachedTokens ?? null,
    prefix_hashes: i.prefixHashes ?? null,
    responses_api: i.responsesApi ?? false,
    counted_prompt_tokens: i.counted?.promptTokens ?? null,
    counted_completion_tokens: i.counted?.completionTokens ?? null,
    reasoning_bound_tokens: i.counted?.reasoningBoundTokens ?? null,
  };
}

const CLEAR_SQL = `SELECT * FROM svc_clear_batch($1::svc_clear_item[], $2::int, $3::timestamptz, $4::int)`;

/** The largest value of the integer columns that hold counts (billed tokens, latency; claims are clamped to it). */
const INT_MAX = 2_147_483_647;

/** A latency in whole milliseconds, within the column. */
function asLatency(ms: number): number {
  return Math.min(Math.max(0, Math.round(ms)), INT_MAX);
}

/** A billed count: ours, so never beyond the hold, let alone the column; anything else is our bug, refused here. */
function assertCount(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0 || n > INT_MAX) throw new Error(`clear: ${what} ${n} is not a count the ledger can hold`);
}

/** A claim: the supplier's number, of any size SQL's bigint takes (lib/upstream/answer.ts reads only safe integers). */
function assertClaim(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`clear: ${what} ${n} is not a count`);
}

/** The platform's fee is spread over this many sub-accounts (one per clear batch, at random): no single hot row. */
const PLATFORM_SHARDS = 16;

// ---------------------------------------------------------------------------------------------------------------
// The reservation as the route makes it: key authentication, the max price, the model's prices and the hold, in
// one statement per batch (svc_reserve_batch).

export type KeyedReservationInput = {
  keyHash: string;
  modelId: string;
  /** The request's own max price (X-Svc-Max-Cents), if any; the statement resolves the rest from fresh rows. */
  requestedMaxPriceCents: number | null;
  promptTokens: number;
  outputTokens: number;
  features: Features;
  /** The request's own `provider` object (null: none); the statement merges it over the key's and the account's. */
  provider: ProviderPreferences | null;
  /** The request's prefix chain as svc_reserve_batch takes it (lib/router/prompt-prefixes.ts prefixesParam); null: none. */
  prefixes?: string | null;
};

type KeyFacts = { apiKeyId: string; accountId: string; keyMaxPriceCents: number | null; spendLimitMicros: bigint | null };

export type KeyedReservation =
  | { status: "invalid_api_key" | "model_not_found" }
  | ({ status: "max_price_above_key_cap" } & KeyFacts)
  /** An id the request's provider.only or provider.ignore lists names no offer and no supplier with offers. */
  | ({ status: "invalid_provider_id"; param: string; id: string } & KeyFacts)
  /** preferences: the merged provider preferences the offers were chosen by (null: none that filter or order). */
  | ({ status: "no_offer"; maxPriceCents: number; burnMicroDiem: bigint; preferences: ProviderPreferences | null } & KeyFacts)
  | ({
      status: "insufficient_balance" | "spend_limit_exceeded";
      maxPriceCents: number;
      burnMicroDiem: bigint;
      offerId: string;
      priceCents: number;
      amountMicros: bigint;
    } & KeyFacts)
  | ({
      status: "ok";
      maxPriceCents: number;
      burnMicroDiem: bigint;
      holdId: string;
      offerId: string;
      priceCents: number;
      amountMicros: bigint;
      upstream: Upstream;
      /** The offer caches prompt prefixes and the model has a cache-read price: cached tokens are billed at it. */
      cachesPrompts: boolean;
      /** The 1-based position in the request's prefix chain of the longest prefix svc sent this offer within its retention. */
      sentPrefix: number | null;
    } & KeyFacts);

/**
 * One item's outcome as svc_reserve_batch answers it: one named record per outcome, with the fields that outcome has
 * (prisma/functions/svc_reserve_batch.sql). Bigints come as decimal strings.
 */
type ReserveOutcome =
  | { status: "rejected" | "invalid_api_key" | "model_not_found" }
  | (KeyRecord & { status: "max_price_above_key_cap" })
  | (KeyRecord & { status: "invalid_provider_id"; param: string; id: string })
  | (PricedRecord & { status: "no_offer"; preferences: ProviderPreferences | null })
  | (PricedRecord & OfferRecord & { status: "insufficient_balance" | "spend_limit_exceeded" })
  | (PricedRecord &
      OfferRecord & {
        status: "ok";
        hold_id: string;
        upstream_base_url: string;
        upstream_key_ciphertext: string;
        upstream_model: string;
        streams: boolean;
        bills_cancelled_in_full: boolean;
        caches_prompts: boolean;
        sent_prefix: number | null;
      });
type KeyRecord = { api_key_id: string; account_id: string; key_max_price_cents: number | null; spend_limit_micros: string | null };
type PricedRecord = KeyRecord & { max_price_cents: number; burn_micro_diem: string };
type OfferRecord = { offer_id: string; price_cents: number; amount_micros: string };
type ReserveBatchRow = { ord: number; outcome: ReserveOutcome };

export async function reserveWithKey(input: KeyedReservationInput): Promise<KeyedReservation> {
  assertCount(input.promptTokens, "promptTokens");
  assertCount(input.outputTokens, "outputTokens");
  const { outcome } = await reservations().submit(input);
  onReserved({
    status: outcome.status,
    holdId: outcome.status === "ok" ? outcome.hold_id : null,
    offerId: "offer_id" in outcome ? outcome.offer_id : null,
  });
  return keyedReservation(outcome);
}

function keyedReservation(o: ReserveOutcome): KeyedReservation {
  switch (o.status) {
    case "rejected":
      throw new Error("the reservation was refused by the database (its counts or price)");
    case "invalid_api_key":
    case "model_not_found":
      return { status: o.status };
    case "max_price_above_key_cap":
      return { status: o.status, ...keyFacts(o) };
    case "invalid_provider_id":
      return { status: o.status, ...keyFacts(o), param: o.param, id: o.id };
    case "no_offer":
      return { status: o.status, ...priced(o), preferences: o.preferences };
    case "insufficient_balance":
    case "spend_limit_exceeded":
      return { status: o.status, ...priced(o), ...offerFacts(o) };
    case "ok": {
      const upstream = {
        baseUrl: o.upstream_base_url,
        keyCiphertext: o.upstream_key_ciphertext,
        model: o.upstream_model,
        streams: o.streams,
        billsCancelledInFull: o.bills_cancelled_in_full,
      };
      return {
        status: o.status,
        ...priced(o),
        ...offerFacts(o),
        holdId: o.hold_id,
        upstream,
        cachesPrompts: o.caches_prompts,
        sentPrefix: o.sent_prefix,
      };
    }
  }
}

function keyFacts(k: KeyRecord): KeyFacts {
  return {
    apiKeyId: k.api_key_id,
    accountId: k.account_id,
    keyMaxPriceCents: k.key_max_price_cents,
    spendLimitMicros: k.spend_limit_micros === null ? null : BigInt(k.spend_limit_micros),
  };
}

function priced(p: PricedRecord) {
  return { ...keyFacts(p), maxPriceCents: p.max_price_cents, burnMicroDiem: BigInt(p.burn_micro_diem) };
}

function offerFacts(o: OfferRecord) {
  return { offerId: o.offer_id, priceCents: o.price_cents, amountMicros: BigInt(o.amount_micros) };
}

function reservations(): GroupCommit<KeyedReservationInput, ReserveBatchRow> {
  return (batchers.reserve ??= new GroupCommit(runReserveBatch, { maxBatch: 256, maxInFlight: 1, isolatable: refusedByDatabase }));
}

async function runReserveBatch(items: KeyedReservationInput[]): Promise<ReserveBatchRow[]> {
  const col = <T>(f: (i: KeyedReservationInput) => T) => items.map(f);
  const now = new Date();
  const rows = await withRetry(() =>
    preparedQuery<ReserveBatchRow>({
      name: "svc_reserve_batch",
      text: RESERVE_SQL,
      values: [
        col((i) => i.keyHash),
        col((i) => i.modelId),
        col((i) => i.requestedMaxPriceCents),
        col((i) => i.promptTokens),
        col((i) => i.outputTokens),
        col((i) => i.features.tools),
        col((i) => i.features.json_schema),
        col((i) => i.features.vision),
        col((i) => (i.provider === null ? null : JSON.stringify(i.provider))),
        col((i) => i.prefixes ?? null),
        env.DEFAULT_MAX_PRICE_CENTS,
        now.toISOString(),
        new Date(now.getTime() + env.UPSTREAM_TIMEOUT_MS + HOLD_GRACE_MS).toISOString(),
      ],
    }),
  );
  return byOrd(rows.rows, items.length);
}

// Both statements are named, so each pooled connection parses and plans them once (PostgreSQL caches the
// functions' inner plans per connection too). Times go as ISO text: pg's own Date formatting cost more.
const RESERVE_SQL = `SELECT ord, outcome FROM svc_reserve_batch($1::text[], $2::text[], $3::int[], $4::int[], $5::int[], $6::boolean[],
  $7::boolean[], $8::boolean[], $9::jsonb[], $10::jsonb[], $11::int, $12::timestamptz, $13::timestamptz)`;

/** A hold outlives the upstream deadline by this much before the sweeper may release it. */
export const HOLD_GRACE_MS = 60_000;

type Batchers = { reserve?: GroupCommit<KeyedReservationInput, ReserveBatchRow>; clear?: GroupCommit<ClearInput, ClearRow> };
const batchers = processState<Batchers>("hold-batchers", () => ({}));

/** PostgreSQL answered with an error (a SQLSTATE): the statement, and so the whole batch, was rolled back. */
function refusedByDatabase(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code);
}

function byOrd<R extends { ord: number }>(rows: R[], n: number): R[] {
  const out = new Array<R>(n);
  for (const r of rows) out[r.ord - 1] = r;
  for (let i = 0; i < n; i++) if (!out[i]) throw new Error(`batch row ${i + 1} has no outcome`);
  return out;
}

/**
 * A batch is one statement, so a deadlock (two instances' batches locking shared rows in different orders) or a
 * serialization failure aborts all of it and leaves nothing behind: it is safe to run again.
 */
async function withRetry<T>(run: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (attempt >= attempts || (code !== "40P01" && code !== "40001")) throw error;
      await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
    }
  }
}

/**
 * Keeps an active hold from the sweeper until `until` (a stream outlives a completion's deadline); false when it is no
 * longer active. Never shortens one.
 */
export async function extendHold(holdId: string, until: Date): Promise<boolean> {
  const n = await db.$executeRaw`
    UPDATE holds SET expires_at = GREATEST(expires_at, ${until}::timestamptz) WHERE id = ${holdId}::uuid AND status = 'active'`;
  return n === 1;
}

/** Releases an active hold; false when it was already cleared or released (idempotent). */
export async function releaseHold(holdId: string, now = new Date()): Promise<boolean> {
  const [row] = await db.$queryRaw<{ released: boolean }[]>`
    SELECT svc_release_hold(${holdId}::uuid, ${now}::timestamptz) AS released`;
  onReleased(holdId);
  return row.released;
}

/** Releases every hold past its deadline (a crash between reserve and clear must not strand money). */
export async function sweepExpiredHolds(now = new Date(), batch = 500): Promise<number> {
  const expired = await db.hold.findMany({
    where: { status: "active", expiresAt: { lt: now } },
    select: { id: true },
    take: batch,
  });
  let released = 0;
  for (const { id } of expired) if (await releaseHold(id, now)) released += 1;
  return released;
}
