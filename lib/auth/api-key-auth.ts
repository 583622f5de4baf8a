import "server-only";
import { db } from "@/lib/db";
import { AppError } from "@/lib/http/errors";
import { sha256Hex } from "@/lib/auth/tokens";

export const API_KEY_PREFIX = "svc_";

export type ApiKeyContext = {
  apiKeyId: string;
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
  const key = await db.apiKey.findUnique({
    where: { keyHash: sha256Hex(bearer) },
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
    accountId: key.accountId,
    maxPriceCents: key.maxPriceCents,
    spendLimitMicros: key.spendLimitMicros,
    accountDefaultMaxPriceCents: key.account.defaultMaxPriceCents,
  };
}
