/** Sign-in and API-key shapes on the wire: request schemas the routes enforce, response schemas they answer with. */
import { isAddress } from "viem";
import { z } from "zod";
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

export const CreateApiKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(API_KEY_NAME_MAX).optional().describe('A label to tell keys apart; default "default"'),
  max_price_cents: PriceCents.nullable().optional().describe("The most this key may pay per diem; null or absent = the account's default"),
  spend_limit: UsdAmount.refine((micros) => micros > 0n, {
    message: "must be a positive USDC amount",
    params: { code: "amount_out_of_range" },
  })
    .nullable()
    .optional()
    .describe('Total USDC this key may spend, e.g. "25.50"; null or absent = no limit beyond the balance'),
  expires_at: z.iso
    .datetime({ offset: true })
    .transform((value) => new Date(value))
    .refine((date) => date.getTime() > Date.now(), "must be in the future")
    .nullable()
    .optional(),
});

export type CreateApiKeyInput = z.infer<typeof CreateApiKeyBody>;

const ApiKeyFields = {
  id: z.string(),
  name: z.string(),
  prefix: z.string().describe("The first characters of the key, to tell keys apart"),
  created_at: Timestamp,
  last_used_at: Timestamp.nullable(),
  max_price_cents: PriceCents.nullable().describe("This key's max price cap; null = the account's default"),
  spend_limit: Usdc.nullable().describe("Total this key may spend; null = no limit beyond the balance"),
  spent: Usdc,
  expires_at: Timestamp.nullable(),
  revoked_at: Timestamp.nullable(),
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
