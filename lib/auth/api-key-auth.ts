import { db } from "@/lib/db";
import { AppError } from "@/lib/http/errors";
import { sha256Hex } from "@/lib/auth/tokens";

export const API_KEY_PREFIX = "svc_";

export type ApiKeyContext = {
  apiKeyId: string;
  accountId: string;
  maxPriceCents: number | null;
  spendLimitMicros: bigint | null;
};

/** Resolves a Bearer `svc_` key to its live key record, or throws 401. */
export async function getApiKeyOrThrow(bearer: string | undefined): Promise<ApiKeyContext> {
  if (!bearer) throw new AppError("missing_credentials", "Send your API key as `Authorization: Bearer svc_...`.");
  if (!bearer.startsWith(API_KEY_PREFIX)) throw new AppError("invalid_api_key", "API keys start with svc_.");
  const key = await db.apiKey.findUnique({ where: { keyHash: sha256Hex(bearer) } });
  if (!key || key.revokedAt || (key.expiresAt && key.expiresAt <= new Date())) {
    throw new AppError("invalid_api_key", "This API key is unknown, revoked or expired.");
  }
  return {
    apiKeyId: key.id,
    accountId: key.accountId,
    maxPriceCents: key.maxPriceCents,
    spendLimitMicros: key.spendLimitMicros,
  };
}
