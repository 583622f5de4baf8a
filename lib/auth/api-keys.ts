import "server-only";
import type { ApiKey } from "@prisma/client";
import { API_KEY_PREFIX } from "@/lib/auth/api-key-auth";
import { randomBase62, sha256Hex } from "@/lib/auth/tokens";
import { db } from "@/lib/db";
import { AppError } from "@/lib/errors";
import { formatMicros } from "@/lib/money";
import type { ApiKeyList, ApiKeyView, CreateApiKeyInput, CreatedApiKey } from "@/lib/auth/schemas";
import { UUID_PATTERN } from "@/lib/wire";

/** 32 random bytes: the key is as strong as a session token. */
const API_KEY_ENTROPY_BYTES = 32;
/** "svc_" plus 8 secret characters (~48 of the ~190 bits): enough to tell keys apart in a list. */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;
const DEFAULT_KEY_NAME = "default";
/** Creates a Bearer key for an account. The secret is returned here once and stored only as its SHA-256. */
export async function createApiKey(accountId: string, input: CreateApiKeyInput): Promise<CreatedApiKey> {
  const key = `${API_KEY_PREFIX}${randomBase62(API_KEY_ENTROPY_BYTES)}`;
  const record = await db.apiKey.create({
    data: {
      accountId,
      name: input.name ?? DEFAULT_KEY_NAME,
      prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
      keyHash: sha256Hex(key),
      maxPriceCents: input.max_price_cents ?? null,
      spendLimitMicros: input.spend_limit ?? null,
      expiresAt: input.expires_at ?? null,
    },
  });
  return { ...toApiKeyView(record), key };
}

/** The account's keys, newest first, revoked ones included (with `revoked_at`); never a secret or hash. */
export async function listApiKeys(accountId: string): Promise<ApiKeyList> {
  const keys = await db.apiKey.findMany({ where: { accountId }, orderBy: [{ createdAt: "desc" }, { id: "asc" }] });
  return { object: "list", data: keys.map(toApiKeyView) };
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
  return toApiKeyView(key);
}

function toApiKeyView(key: ApiKey): ApiKeyView {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    max_price_cents: key.maxPriceCents,
    spend_limit: key.spendLimitMicros === null ? null : formatMicros(key.spendLimitMicros),
    spent: formatMicros(key.spentMicros),
    expires_at: key.expiresAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}

function apiKeyNotFound() {
  return new AppError("not_found", "No such API key on your account.");
}
