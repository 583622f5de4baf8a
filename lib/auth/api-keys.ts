import "server-only";
import { Prisma, type ApiKey } from "@prisma/client";
import { API_KEY_PREFIX } from "@/lib/auth/api-key-auth";
import { keyPeriodEnd, keyPeriodSpentMicros, keyPeriodStart } from "@/lib/auth/key-periods";
import { randomBase62, sha256Hex } from "@/lib/auth/tokens";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { formatMicros } from "@/lib/money";
import { preferencesOrNull, type ProviderPreferences } from "@/lib/market/provider-schemas";
import { assertProviderIdsExist } from "@/lib/market/provider-ids";
import type { ApiKeyList, ApiKeyView, CreateApiKeyInput, CreatedApiKey, LimitReset, UpdateApiKeyInput } from "@/lib/auth/schemas";
import { UUID_PATTERN } from "@/lib/wire";

/** 32 random bytes: the key is as strong as a session token. */
const API_KEY_ENTROPY_BYTES = 32;
/** "svc_" plus 8 secret characters (~48 of the ~190 bits): enough to tell keys apart in a list. */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;
const DEFAULT_KEY_NAME = "default";
/** Creates a Bearer key for an account. The secret is returned here once and stored only as its SHA-256. */
export async function createApiKey(accountId: string, input: CreateApiKeyInput): Promise<CreatedApiKey> {
  await assertProviderIdsExist(input.provider_preferences, "provider_preferences");
  const key = `${API_KEY_PREFIX}${randomBase62(API_KEY_ENTROPY_BYTES)}`;
  const record = await db.apiKey.create({
    data: {
      accountId,
      name: input.name ?? DEFAULT_KEY_NAME,
      prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
      keyHash: sha256Hex(key),
      maxPriceCents: input.max_price_cents ?? null,
      spendLimitMicros: input.spend_limit ?? null,
      // The period's counter starts at 0; the first reservation sets its period (svc_reserve_batch).
      limitReset: input.limit_reset ?? null,
      expiresAt: input.expires_at ?? null,
      providerPreferences: storedPreferences(input.provider_preferences),
    },
  });
  return { ...toApiKeyView(record, new Date()), key };
}

/** The account's keys, newest first, revoked ones included (with `revoked_at`); never a secret or hash. */
export async function listApiKeys(accountId: string, now = new Date()): Promise<ApiKeyList> {
  const keys = await db.apiKey.findMany({ where: { accountId }, orderBy: [{ createdAt: "desc" }, { id: "asc" }] });
  return { object: "list", data: keys.map((key) => toApiKeyView(key, now)) };
}

/**
 * Edits one of the account's live keys: only the fields sent change. The key's row is locked first, so no reservation
 * or clear of the key runs meanwhile. A new limit_reset starts the current period's counter over from the ledger:
 * what the key's clears charged for holds reserved since the period began, plus what its active holds reserved since
 * then (an active hold whose unused part will not come back to this counter stays counted whole: the safe side). A
 * spend_limit below what the period has spent is accepted and refuses requests until the reset. Another account's
 * key, an unknown id and a malformed id are the same 404; a revoked key is a 409.
 */
export async function updateApiKey(accountId: string, id: string, patch: UpdateApiKeyInput, now = new Date()): Promise<ApiKeyView> {
  if (!UUID_PATTERN.test(id)) throw apiKeyNotFound();
  await assertProviderIdsExist(patch.provider_preferences, "provider_preferences");
  const updated = await db.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<unknown[]>`
      SELECT 1 AS one FROM "api_keys" WHERE "id" = ${id}::uuid AND "account_id" = ${accountId}::uuid FOR UPDATE`;
    if (locked.length === 0) throw apiKeyNotFound();
    const key = await tx.apiKey.findUniqueOrThrow({ where: { id } });
    if (key.revokedAt) throw new AppError("conflict", "This API key is revoked; a revoked key cannot be edited.");
    const data: Prisma.ApiKeyUpdateInput = {};
    if (patch.name !== undefined) data.name = patch.name;
    if (patch.max_price_cents !== undefined) data.maxPriceCents = patch.max_price_cents;
    if (patch.spend_limit !== undefined) data.spendLimitMicros = patch.spend_limit;
    if (patch.expires_at !== undefined) data.expiresAt = patch.expires_at;
    if (patch.provider_preferences !== undefined) data.providerPreferences = storedPreferences(patch.provider_preferences);
    if (patch.limit_reset !== undefined && patch.limit_reset !== key.limitReset) {
      const periodStart = keyPeriodStart(patch.limit_reset, now);
      data.limitReset = patch.limit_reset;
      data.periodStart = periodStart;
      data.periodSpentMicros = periodStart === null ? 0n : await spentSince(tx, key, periodStart);
    }
    return tx.apiKey.update({ where: { id }, data });
  });
  return toApiKeyView(updated, now);
}

/** What a key's holds reserved since `start` have cost: charged by their clears, or reserved while still active. */
async function spentSince(tx: Prisma.TransactionClient, key: ApiKey, start: Date): Promise<bigint> {
  const [row] = await tx.$queryRaw<{ spent: bigint | string }[]>`
    SELECT COALESCE(SUM(CASE WHEN h."status" = 'active' THEN h."amount_micros" ELSE cl."charge_micros" END), 0)::bigint AS spent
    FROM "holds" h
    LEFT JOIN "completions" c ON c."hold_id" = h."id"
    LEFT JOIN "clears" cl ON cl."completion_id" = c."id"
    WHERE h."account_id" = ${key.accountId}::uuid AND h."api_key_id" = ${key.id}::uuid
      AND (h."created_at" >= ${start}::timestamptz OR h."key_period_start" = ${start}::timestamptz)
      AND (h."status" = 'active' OR cl."id" IS NOT NULL)`;
  return BigInt(row.spent);
}

/**
 * Revokes one of the account's keys; it is refused from the next request on. Idempotent for the owner;
 * another account's key, an unknown id and a malformed id are all the same 404, so ids cannot be probed.
 */
export async function revokeApiKey(accountId: string, id: string, now = new Date()): Promise<ApiKeyView> {
  if (!UUID_PATTERN.test(id)) throw apiKeyNotFound();
  await db.apiKey.updateMany({ where: { id, accountId, revokedAt: null }, data: { revokedAt: now } });
  const key = await db.apiKey.findFirst({ where: { id, accountId } });
  if (!key) throw apiKeyNotFound();
  return toApiKeyView(key, now);
}

function toApiKeyView(key: ApiKey, now: Date): ApiKeyView {
  const reset: LimitReset | null = key.limitReset;
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    max_price_cents: key.maxPriceCents,
    spend_limit: key.spendLimitMicros === null ? null : formatMicros(key.spendLimitMicros),
    limit_reset: reset,
    spent: formatMicros(key.spentMicros),
    period_spent: reset === null ? null : formatMicros(keyPeriodSpentMicros(reset, key.periodStart, key.periodSpentMicros, now)),
    limit_resets_at: keyPeriodEnd(reset, now)?.toISOString() ?? null,
    expires_at: key.expiresAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
    provider_preferences: preferencesView(key.providerPreferences),
  };
}

/** Default preferences as a key or an account stores them: SQL NULL for none (an empty object included). */
export function storedPreferences(prefs: ProviderPreferences | null | undefined): Prisma.InputJsonValue | typeof Prisma.DbNull {
  const kept = preferencesOrNull(prefs);
  return kept === null ? Prisma.DbNull : (kept as Prisma.InputJsonValue);
}

/** Stored default preferences as the views show them. */
export function preferencesView(stored: Prisma.JsonValue | null): ProviderPreferences | null {
  return stored === null ? null : (stored as ProviderPreferences);
}

function apiKeyNotFound() {
  return new AppError("not_found", "No such API key on your account.");
}
