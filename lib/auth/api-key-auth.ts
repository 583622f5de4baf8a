import "server-only";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { sha256Hex } from "@/lib/auth/tokens";
import { processCache } from "@/lib/cache";

export const API_KEY_PREFIX = "svc_";

export type ApiKeyContext = {
  apiKeyId: string;
  /** sha256 of the bearer: the completion's reservation re-authenticates the key by it (lib/router/holds.ts). */
  keyHash: string;
  accountId: string;
  maxPriceCents: number | null;
  spendLimitMicros: bigint | null;
  /** The owning account's default max price, read in the same query (the router needs it on every call). */
  accountDefaultMaxPriceCents: number | null;
};

/**
 * `lastUsedAt` is kept to this resolution: a key in use costs one write per minute, not one per request
 * on the completion hot path.
 */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Resolves a Bearer `svc_` key to its live key record, or throws 401. */
export async function getApiKeyOrThrow(bearer: string | undefined, now = new Date()): Promise<ApiKeyContext> {
  if (!bearer) throw new AppError("missing_credentials", "Send your API key as `Authorization: Bearer svc_...`.");
  if (!bearer.startsWith(API_KEY_PREFIX)) throw new AppError("invalid_api_key", "API keys start with svc_.");
  const keyHash = sha256Hex(bearer);
  const key = await db.apiKey.findUnique({
    where: { keyHash },
    include: { account: { select: { defaultMaxPriceCents: true } } },
  });
  if (!key || key.revokedAt || (key.expiresAt && key.expiresAt <= now)) {
    throw new AppError("invalid_api_key", "This API key is unknown, revoked or expired.");
  }
  const staleBefore = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
  if (!key.lastUsedAt || key.lastUsedAt < staleBefore) {
    await db.apiKey.updateMany({
      where: { id: key.id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: staleBefore } }] },
      data: { lastUsedAt: now },
    });
  }
  return {
    apiKeyId: key.id,
    keyHash,
    accountId: key.accountId,
    maxPriceCents: key.maxPriceCents,
    spendLimitMicros: key.spendLimitMicros,
    accountDefaultMaxPriceCents: key.account.defaultMaxPriceCents,
  };
}

/**
 * The completion route's key resolution: from this process's cache when the key was seen live recently, else as
 * getApiKeyOrThrow. The cache is never the authority: the reservation statement authenticates the key again
 * from its row in the same round trip that reserves (revoked or expired keys are refused at once on every
 * instance, and nothing is reserved for them), and drops it from here when it does (forgetApiKey). Only the key's
 * id and account (for rate limiting) are taken from the cache; the max price and the spend limit are read fresh
 * by the statement.
 */
export async function getApiKeyForCompletion(bearer: string | undefined, now = new Date()): Promise<ApiKeyContext> {
  if (bearer?.startsWith(API_KEY_PREFIX)) {
    const keyHash = sha256Hex(bearer);
    const hit = keyCache.get(keyHash, now.getTime());
    if (hit) return hit;
  }
  const key = await getApiKeyOrThrow(bearer, now);
  keyCache.set(key.keyHash, key, KEY_CACHE_TTL_MS, now.getTime());
  return key;
}

/**
 * Re-checks a (possibly cached) key against its row before an answer that tells its owner something, when no
 * reservation statement has checked it: a revoked key learns nothing, not even a balance.
 */
export async function assertApiKeyLive(keyHash: string, now = new Date()): Promise<void> {
  const live = await db.apiKey.count({
    where: { keyHash, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
  });
  if (live === 0) {
    forgetApiKey(keyHash);
    throw new AppError("invalid_api_key", "This API key is unknown, revoked or expired.");
  }
}

/** Drops a key the database refused (revoked, expired, deleted) from this process's cache. */
export function forgetApiKey(keyHash: string): void {
  keyCache.delete(keyHash);
}

const KEY_CACHE_TTL_MS = 60_000;
/** Only keys the database answered live are stored (a made-up bearer never is): the bound is for many live keys. */
const KEY_CACHE_MAX = 10_000;
const keyCache = processCache<ApiKeyContext>("api-keys", KEY_CACHE_MAX);
