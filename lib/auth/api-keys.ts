import type { ApiKey } from "@prisma/client";
import { z } from "zod";
import { API_KEY_PREFIX } from "@/lib/auth/api-key-auth";
import { randomBase62, sha256Hex } from "@/lib/auth/tokens";
import { db } from "@/lib/db";
import { AppError } from "@/lib/http/errors";
import { formatMicros, parseMicros } from "@/lib/money";

/** 32 random bytes: the key is as strong as a session token. */
const API_KEY_ENTROPY_BYTES = 32;
/** "svc_" plus 8 secret characters (~48 of the ~190 bits): enough to tell keys apart in a list. */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8;
const DEFAULT_KEY_NAME = "default";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const MaxPriceCents = z.number().int().min(1).max(10_000);

export const CreateApiKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(100).optional(),
  /** The most this key may pay per diem; null or absent = the account's default. */
  maxPriceCents: MaxPriceCents.nullable().optional(),
  /** Total USDC this key may spend, e.g. "25.50"; null or absent = no limit beyond the balance. */
  spendLimit: z
    .string()
    .refine((value) => (parseMicros(value) ?? 0n) > 0n, "must be a positive USDC amount with at most 6 decimals, e.g. \"25.50\"")
    .transform((value) => parseMicros(value) as bigint)
    .nullable()
    .optional(),
  expiresAt: z.iso
    .datetime({ offset: true })
    .transform((value) => new Date(value))
    .refine((date) => date.getTime() > Date.now(), "must be in the future")
    .nullable()
    .optional(),
});

export type CreateApiKeyInput = z.infer<typeof CreateApiKeyBody>;

export type ApiKeyView = {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  maxPriceCents: number | null;
  spendLimit: string | null;
  spent: string;
  expiresAt: string | null;
  revokedAt: string | null;
};

/** Creates a Bearer key for an account. The secret is returned here once and stored only as its SHA-256. */
export async function createApiKey(accountId: string, input: CreateApiKeyInput): Promise<ApiKeyView & { key: string }> {
  const key = `${API_KEY_PREFIX}${randomBase62(API_KEY_ENTROPY_BYTES)}`;
  const record = await db.apiKey.create({
    data: {
      accountId,
      name: input.name ?? DEFAULT_KEY_NAME,
      prefix: key.slice(0, DISPLAY_PREFIX_LENGTH),
      keyHash: sha256Hex(key),
      maxPriceCents: input.maxPriceCents ?? null,
      spendLimitMicros: input.spendLimit ?? null,
      expiresAt: input.expiresAt ?? null,
    },
  });
  return { ...toApiKeyView(record), key };
}

/** The account's keys, newest first, revoked ones included (with `revokedAt`); never a secret or hash. */
export async function listApiKeys(accountId: string): Promise<{ object: "list"; data: ApiKeyView[] }> {
  const keys = await db.apiKey.findMany({ where: { accountId }, orderBy: [{ createdAt: "desc" }, { id: "asc" }] });
  return { object: "list", data: keys.map(toApiKeyView) };
}

/**
 * Revokes one of the account's keys; it is refused from the next request on. Idempotent for the owner;
 * another account's key, an unknown id and a malformed id are all the same 404, so ids cannot be probed.
 */
export async function revokeApiKey(accountId: string, id: string, now = new Date()): Promise<ApiKeyView> {
  if (!UUID.test(id)) throw apiKeyNotFound();
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
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    maxPriceCents: key.maxPriceCents,
    spendLimit: key.spendLimitMicros === null ? null : formatMicros(key.spendLimitMicros),
    spent: formatMicros(key.spentMicros),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}

function apiKeyNotFound() {
  return new AppError("not_found", "No such API key on your account.");
}
