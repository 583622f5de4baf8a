/** The signed-in account's shapes on the wire: profile, balance, usage. */
import { z } from "zod";
import { ProviderPreferencesSchema, ProviderPreferencesView } from "@/lib/market/provider-schemas";
import { Address, Cents, component, Day, Diem, listOf, pageOf, PriceCents, Timestamp, Usdc } from "@/lib/wire";

export const UpdateAccountBody = z
  .strictObject({
    default_max_price_cents: PriceCents.nullable()
      .optional()
      .describe("Cents per diem the account pays at most when neither the request nor the key says; null = the platform default"),
    provider_preferences: ProviderPreferencesSchema.nullable()
      .optional()
      .describe(
        "Default provider preferences for every key of the account (the chat request's provider object, same fields and bounds): under the key's and the request's, field by field; null = none",
      ),
  })
  .refine((body) => body.default_max_price_cents !== undefined || body.provider_preferences !== undefined, {
    message: "must set default_max_price_cents or provider_preferences",
  });

export type UpdateAccountInput = z.infer<typeof UpdateAccountBody>;

export const AccountSchema = component(
  "Account",
  z.object({
    address: Address,
    balance: Usdc,
    held: Usdc.describe("Reserved by in-flight completions"),
    available: Usdc,
    default_max_price_cents: Cents.nullable().describe("The account's default max price; null = the platform default"),
    platform_default_max_price_cents: Cents,
    provider_preferences: ProviderPreferencesView.nullable().describe(
      "The account's default provider preferences (under each key's and each request's, field by field); null = none",
    ),
  }),
);
export type AccountProfile = z.output<typeof AccountSchema>;

export const BalanceSchema = component(
  "Balance",
  z.object({ available: Usdc, held: Usdc, total: Usdc }).describe("The prepaid buying balance: total = available + held."),
);
export type BalanceView = z.output<typeof BalanceSchema>;

const UsageItemSchema = z.object({
  id: z.string(),
  created_at: Timestamp,
  key: z.object({ id: z.string(), name: z.string(), prefix: z.string() }),
  model: z.string(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  usage_estimated: z.boolean().describe("True when the upstream reported no usage and svc counted the tokens itself"),
  burn: Diem.describe("Capacity burned"),
  price_cents: Cents,
  cost: Usdc.describe("USDC paid for this completion"),
  latency_ms: z.number().int(),
});
export type UsageItem = z.output<typeof UsageItemSchema>;

export const UsagePageSchema = component("UsagePage", pageOf(UsageItemSchema));
export type UsagePage = z.output<typeof UsagePageSchema>;

export const DailyQuery = z.strictObject({ days: z.coerce.number().int().min(1).max(365).default(30) });

const DailySpendSchema = z.object({ day: Day, requests: z.number().int(), cost: Usdc, burn: Diem });
export type DailySpend = z.output<typeof DailySpendSchema>;

export const DailySpendListSchema = component("DailySpendList", listOf(DailySpendSchema));
export type DailySpendList = z.output<typeof DailySpendListSchema>;
