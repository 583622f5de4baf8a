/** The signed-in account's shapes on the wire: profile, balance, usage. */
import { z } from "zod";
import { ProviderPreferencesSchema, ProviderPreferencesView } from "@/lib/market/provider-schemas";
import { Address, Cents, component, Day, Diem, listOf, pageOf, PriceCents, Timestamp, Usdc } from "@/lib/wire";

/**
 * A supplier's display name, as buyers see it beside the public id: 3 to 40 characters of letters, digits, spaces and
 * . _ - & ', starting with a letter or digit, never a public id's shape (sup_…). Unique case-insensitively.
 */
export const SUPPLIER_NAME_MAX = 40;
export const SupplierDisplayName = z
  .string()
  .trim()
  .min(3, "must be at least 3 characters")
  .max(SUPPLIER_NAME_MAX, `must be at most ${SUPPLIER_NAME_MAX} characters`)
  .regex(/^[\p{L}\p{N}][\p{L}\p{N} ._&'-]*$/u, "may hold letters, digits, spaces and . _ - & ' and must start with a letter or digit")
  .refine((name) => !/^sup_/i.test(name), "must not look like a supplier id (sup_…)")
  .refine((name) => !/\s{2}/.test(name), "must not hold two spaces in a row");

export const UpdateAccountBody = z
  .strictObject({
    display_name: SupplierDisplayName.nullable()
      .optional()
      .describe("Your name as a supplier, shown to buyers beside your public id (sup_…): unique, case-insensitively; null = none"),
    default_max_price_cents: PriceCents.nullable()
      .optional()
      .describe("Cents per diem the account pays at most when neither the request nor the key says; null = the platform default"),
    provider_preferences: ProviderPreferencesSchema.nullable()
      .optional()
      .describe(
        "Default provider preferences for every key of the account (the chat request's provider object, same fields and bounds): under the key's and the request's, field by field; null = none",
      ),
  })
  .refine(
    (body) => body.default_max_price_cents !== undefined || body.provider_preferences !== undefined || body.display_name !== undefined,
    { message: "must set default_max_price_cents, provider_preferences or display_name" },
  );

export type UpdateAccountInput = z.infer<typeof UpdateAccountBody>;

export const AccountSchema = component(
  "Account",
  z.object({
    address: Address,
    display_name: z.string().nullable().describe("Your name as a supplier, shown to buyers beside your public id; null = none"),
    supplier_id: z.string().describe("Your public id as a supplier (sup_…), as buyers see it"),
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
  id: z.string().describe("The id the buyer was given: chatcmpl-… from chat completions, resp_… from POST /v1/responses"),
  completion_id: z.string().describe("The completion's own id (chatcmpl-…, X-Svc-Generation-Id); the same as id for a chat completion"),
  created_at: Timestamp,
  key: z.object({ id: z.string(), name: z.string(), prefix: z.string() }),
  model: z.string(),
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  cached_tokens: z
    .number()
    .int()
    .nullable()
    .describe("Prompt tokens billed at the cache-read price (within prompt_tokens); null when the offer does not cache prompts"),
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

export const RefusalsQuery = z.strictObject({
  hours: z.coerce.number().int().min(1).max(168).default(24).describe("How far back, in hours (1 to 168; refusals are kept 7 days)"),
  key_id: z.uuid().optional().describe("Only this key's refusals (one of the account's keys)"),
});
export type RefusalsQueryInput = z.infer<typeof RefusalsQuery>;

const RefusedKey = z.object({ id: z.string(), name: z.string(), prefix: z.string() });
const RefusalStatus = z.number().int().describe("The HTTP status the request was answered: 402, 429 or 503");
const RefusalCode = z
  .string()
  .describe("The error code it was answered (see /docs/errors), e.g. spend_limit_exceeded, rate_limited, no_capacity");
const RefusalMessage = z.string().describe("What the latest of them was told (the error's message, cut to 500 characters)");

export const RefusalListSchema = component(
  "RefusalList",
  z
    .object({
      object: z.literal("refusals"),
      since: Timestamp.describe("The start of the window (a whole minute)"),
      total: z.number().int().describe("Requests refused in the window, every key"),
      by_key: z
        .array(
          z.object({
            key: RefusedKey,
            total: z.number().int(),
            last_at: Timestamp.describe("The key's latest refusal"),
            reasons: z
              .array(
                z.object({
                  status: RefusalStatus,
                  code: RefusalCode,
                  count: z.number().int(),
                  last_at: Timestamp,
                  last_message: RefusalMessage,
                }),
              )
              .describe("Counted by reason, most first"),
          }),
        )
        .describe("Each key that was refused in the window, latest first"),
      recent: z
        .array(
          z.object({
            minute: Timestamp.describe("The UTC minute these refusals fell in"),
            key: RefusedKey,
            status: RefusalStatus,
            code: RefusalCode,
            count: z.number().int().describe("How many in that minute"),
            last_at: Timestamp,
            last_message: RefusalMessage,
          }),
        )
        .describe("The latest minutes with refusals, one row per key and reason, newest first (at most 50)"),
    })
    .describe(
      "Requests the account's keys were refused (402, 429, 503), per key by reason; served requests are GET /v1/account/usage. A 429 of the per-address limits, before the key is read, is not counted.",
    ),
);
export type RefusalList = z.output<typeof RefusalListSchema>;
