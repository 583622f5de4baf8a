/** Sign-in and API-key shapes on the wire: request schemas the routes enforce, response schemas they answer with. */
import { isAddress } from "viem";
import { z } from "zod";
import { ProviderPreferencesSchema, ProviderPreferencesView } from "@/lib/market/provider-schemas";
import { Address, component, listOf, PriceCents, Timestamp, Usdc, UsdAmount } from "@/lib/wire";

// ─── sign-in ─────────────────────────────────────────────────────────────────

/** The spec names this query parameter `walletAddress`; it is the one camelCase name on the wire. */
export const NonceQuery = z.strictObject({
  walletAddress: z
    .string()
    .refine((value) => isAddress(value), "must be a 0x-prefixed 20-byte hex address (mixed case only with a valid EIP-55 checksum)"),
});

export const VerifyBody = z.strictObject({
  message: z.string().min(1).max(8192),
  signature: z.string().min(1).max(100_000),
});

export type VerifyInput = z.infer<typeof VerifyBody>;

export const SiweChallengeSchema = component(
  "SiweChallenge",
  z
    .object({
      nonce: z.string(),
      issued_at: Timestamp,
      expiration_time: Timestamp,
      domain: z.string().describe("The SIWE `domain`: this deployment's host"),
      uri: z.string().describe("The SIWE `uri`: this deployment's origin"),
      chain_id: z.number().int().describe("Always 8453 (Base)"),
      statement: z.string(),
    })
    .describe("Every field of the EIP-4361 message to sign; the nonce is single use and bound to the wallet."),
);

export type SiweChallenge = z.output<typeof SiweChallengeSchema>;

export const SessionSchema = component(
  "Session",
  z.object({ address: Address, expires_at: Timestamp }).describe("The signed-in wallet and when its session ends."),
);

export type SessionView = z.output<typeof SessionSchema>;

// ─── API keys ────────────────────────────────────────────────────────────────

export const API_KEY_NAME_MAX = 100;

/** When a key's spend limit starts again from zero: UTC midnight, Monday 00:00 UTC, or the 1st of the month 00:00 UTC. */
export const LIMIT_RESETS = ["daily", "weekly", "monthly"] as const;
export const LimitReset = z.enum(LIMIT_RESETS, { error: 'must be "daily", "weekly", "monthly" or null (a lifetime limit)' });
export type LimitReset = z.infer<typeof LimitReset>;

const ApiKeyInputFields = {
  name: z.string().trim().min(1).max(API_KEY_NAME_MAX).optional().describe('A label to tell keys apart; default "default"'),
  max_price_cents: PriceCents.nullable().optional().describe("The most this key may pay per diem; null or absent = the account's default"),
  spend_limit: UsdAmount.refine((micros) => micros > 0n, {
    message: "must be a positive USDC amount",
    params: { code: "amount_out_of_range" },
  })
    .nullable()
    .optional()
    .describe('USDC this key may spend (per period when limit_reset is set), e.g. "25.50"; null or absent = no limit beyond the balance'),
  limit_reset: LimitReset.nullable()
    .optional()
    .describe(
      "When spend_limit starts again from zero, in UTC: daily (midnight), weekly (Monday 00:00) or monthly (the 1st, 00:00); " +
        "null or absent = a lifetime limit. A request reserved before a reset counts against the period it was reserved in.",
    ),
  expires_at: z.iso
    .datetime({ offset: true })
    .transform((value) => new Date(value))
    .refine((date) => date.getTime() > Date.now(), "must be in the future")
    .nullable()
    .optional(),
  provider_preferences: ProviderPreferencesSchema.nullable()
    .optional()
    .describe(
      "Default provider preferences for this key's requests (the chat request's provider object, same fields and bounds): over the account's, under the request's own, field by field; null or absent = none",
    ),
};

export const CreateApiKeyBody = z.strictObject(ApiKeyInputFields);

export type CreateApiKeyInput = z.infer<typeof CreateApiKeyBody>;

/**
 * An edit of a key: only the fields sent change; null clears a limit. A new spend_limit below what the period has
 * already spent is accepted: the key is refused (402 spend_limit_exceeded) until the next reset, or until raised.
 */
export const UpdateApiKeyBody = z.strictObject({
  ...ApiKeyInputFields,
  name: z.string().trim().min(1).max(API_KEY_NAME_MAX).optional().describe("A new label"),
});

export type UpdateApiKeyInput = z.infer<typeof UpdateApiKeyBody>;

const ApiKeyFields = {
  id: z.string(),
  name: z.string(),
  prefix: z.string().describe("The first characters of the key, to tell keys apart"),
  created_at: Timestamp,
  last_used_at: Timestamp.nullable(),
  max_price_cents: PriceCents.nullable().describe("This key's max price cap; null = the account's default"),
  spend_limit: Usdc.nullable().describe("What this key may spend, per period when limit_reset is set; null = no limit beyond the balance"),
  limit_reset: LimitReset.nullable().describe("When spend_limit resets (UTC); null = a lifetime limit"),
  spent: Usdc.describe("Everything this key has spent, including what requests in flight have reserved"),
  period_spent: Usdc.nullable().describe(
    "What this key has spent in the current period (limit_reset), including what requests in flight reserved in it; null for a lifetime limit",
  ),
  limit_resets_at: Timestamp.nullable().describe("The next reset of the spend limit (UTC); null for a lifetime limit"),
  expires_at: Timestamp.nullable(),
  revoked_at: Timestamp.nullable(),
  provider_preferences: ProviderPreferencesView.nullable().describe("This key's default provider preferences; null = none"),
};

export const ApiKeySchema = component("ApiKey", z.object(ApiKeyFields));
export type ApiKeyView = z.output<typeof ApiKeySchema>;

export const CreatedApiKeySchema = component(
  "CreatedApiKey",
  z.object({ ...ApiKeyFields, key: z.string().describe("The Bearer key (svc_…). Shown only in this response.") }),
);
export type CreatedApiKey = z.output<typeof CreatedApiKeySchema>;

export const ApiKeyListSchema = component("ApiKeyList", listOf(ApiKeySchema));
export type ApiKeyList = z.output<typeof ApiKeyListSchema>;

// ─── GET /v1/key ─────────────────────────────────────────────────────────────

export const KeyRateLimitSchema = z
  .object({
    requests: z.number().int().describe("Requests this key may make per interval"),
    interval: z.string().describe('The interval, e.g. "60s"'),
  })
  .describe("The key's own rate limit (per-IP limits apply as well)");

export const CurrentKeySchema = component(
  "CurrentKey",
  z
    .object({
      object: z.literal("key"),
      data: z.object({
        id: z.string(),
        name: z.string(),
        prefix: z.string().describe("The first characters of the key, to tell keys apart"),
        limit: Usdc.nullable().describe("The spend limit (per period when limit_reset is set); null = no limit beyond the balance"),
        limit_remaining: Usdc.nullable().describe(
          "What the key may still reserve before the limit (this period's, when it resets): the limit less what it spent, " +
            "requests in flight included; 0 when a limit was lowered below that; null without a limit",
        ),
        limit_reset: LimitReset.nullable().describe("When the limit resets (UTC; weeks Monday to Sunday); null = a lifetime limit"),
        limit_resets_at: Timestamp.nullable().describe("The next reset; null for a lifetime limit"),
        usage: Usdc.describe("Everything this key has been charged (its clears), requests in flight not included"),
        usage_daily: Usdc.describe("Charged by this key's clears in the current UTC day"),
        usage_weekly: Usdc.describe("… in the current UTC week (Monday to Sunday)"),
        usage_monthly: Usdc.describe("… in the current UTC month"),
        max_price_cents: PriceCents.nullable().describe("This key's max price cap; null = the account's default"),
        provider_preferences: ProviderPreferencesView.nullable().describe(
          "This key's default provider preferences (over the account's, under the request's own provider object); null = none",
        ),
        expires_at: Timestamp.nullable(),
        created_at: Timestamp,
        rate_limit: KeyRateLimitSchema,
      }),
    })
    .describe(
      "The key that made the request, its limits and its usage; OpenRouter's field names for GET /api/v1/key, money as USDC strings.",
    ),
);
export type CurrentKey = z.output<typeof CurrentKeySchema>;
