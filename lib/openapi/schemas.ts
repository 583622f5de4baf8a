/**
 * The success shapes of the API as zod schemas, for the OpenAPI description. Each one is checked at compile
 * time against the type its domain function returns (`Same<…>` below), so a field added to, renamed in or
 * dropped from a response fails `tsc` here instead of drifting out of the documentation.
 */
import type { Hash } from "viem";
import { z } from "zod";
import type { AccountProfile } from "@/lib/account/profile";
import type { ApiKeyView, listApiKeys } from "@/lib/auth/api-keys";
import type { describeSession } from "@/lib/auth/sessions";
import type { SiweChallenge } from "@/lib/auth/siwe";
import { ERROR_STATUS } from "@/lib/http/errors";
import type { LedgerHealth } from "@/lib/ledger/health";
import type { LedgerPage } from "@/lib/ledger/history";
import type { BookView, listMarketModels } from "@/lib/market/book";
import type { listModels } from "@/lib/market/models";
import type { PoolSummary } from "@/lib/market/pool";
import type { MarketStats } from "@/lib/market/stats";
import type { listTrades } from "@/lib/market/trades";
import type { getPublicHealth } from "@/lib/ops/health";
import type { formatTopUp } from "@/lib/payments/top-up";
import type { ChatCompletionResponse } from "@/lib/router/complete";
import type { listDailySpend, listUsage } from "@/lib/router/usage";
import type { Earnings } from "@/lib/supply/earnings";
import type { CheckedOfferView, listOffers, OfferView } from "@/lib/supply/offers";
import type { WithdrawalView } from "@/lib/supply/withdrawals";

/** Named schemas: each becomes `#/components/schemas/<id>` and is referenced wherever it is used. */
export const componentRegistry = z.registry<{ id: string }>();

function component<S extends z.ZodType>(id: string, schema: S): S {
  componentRegistry.add(schema, { id });
  return schema;
}

// ─── wire units ──────────────────────────────────────────────────────────────

const Usdc = z.string().regex(/^-?\d+\.\d{6}$/).describe('USDC, decimal string with 6 places, e.g. "12.500000"');
const Diem = z.string().regex(/^-?\d+\.\d{6}$/).describe('Diem (capacity), decimal string with 6 places, e.g. "3.250000"');
const Cents = z.number().int().describe("Cents per diem (100 = list price)");
const Timestamp = z.string().meta({ format: "date-time" });
const Day = z.string().meta({ format: "date" }).describe("UTC day, YYYY-MM-DD");
const TxHash = z.templateLiteral(["0x", z.string()]).describe("Transaction hash on Base");
const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/).describe("EIP-55 wallet address");
const ListPrice = z.object({ inputDiemPerMTok: Diem, outputDiemPerMTok: Diem }).describe("List price, diem per 1M tokens");

// ─── auth ────────────────────────────────────────────────────────────────────

export const SiweChallengeSchema = component(
  "SiweChallenge",
  z
    .object({
      nonce: z.string(),
      issuedAt: Timestamp,
      expirationTime: Timestamp,
      domain: z.string().describe("The SIWE `domain`: this deployment's host"),
      uri: z.string().describe("The SIWE `uri`: this deployment's origin"),
      chainId: z.number().int().describe("Always 8453 (Base)"),
      statement: z.string(),
    })
    .describe("Every field of the EIP-4361 message to sign; the nonce is single use and bound to the wallet."),
);

export const SessionSchema = component(
  "Session",
  z.object({ address: Address, expiresAt: Timestamp }).describe("The signed-in wallet and when its session ends."),
);

// ─── account ─────────────────────────────────────────────────────────────────

export const AccountSchema = component(
  "Account",
  z.object({
    address: Address,
    balance: Usdc,
    held: Usdc.describe("Reserved by in-flight completions"),
    available: Usdc,
    defaultMaxPriceCents: Cents.nullable().describe("The account's default max price; null = the platform default"),
    platformDefaultMaxPriceCents: Cents,
  }),
);

export const BalanceSchema = component(
  "Balance",
  z.object({ available: Usdc, held: Usdc, total: Usdc }).describe("The prepaid buying balance: total = available + held."),
);

const ApiKeyFields = {
  id: z.string(),
  name: z.string(),
  prefix: z.string().describe("The first characters of the key, to tell keys apart"),
  createdAt: Timestamp,
  lastUsedAt: Timestamp.nullable(),
  maxPriceCents: Cents.nullable().describe("This key's max price cap; null = the account's default"),
  spendLimit: Usdc.nullable().describe("Total this key may spend; null = no limit beyond the balance"),
  spent: Usdc,
  expiresAt: Timestamp.nullable(),
  revokedAt: Timestamp.nullable(),
};

export const ApiKeySchema = component("ApiKey", z.object(ApiKeyFields));

export const CreatedApiKeySchema = component(
  "CreatedApiKey",
  z.object({ ...ApiKeyFields, key: z.string().describe("The Bearer key (svc_…). Shown only in this response.") }),
);

export const ApiKeyListSchema = component("ApiKeyList", z.object({ object: z.literal("list"), data: z.array(ApiKeySchema) }));

const LedgerItemSchema = z.object({
  id: z.string(),
  kind: z.enum(["topup", "clear", "withdrawal", "withdrawal_reversal"]),
  ledger: z.enum(["balance", "earnings"]),
  amount: Usdc.describe("Signed from this account's point of view: positive credits it"),
  createdAt: Timestamp,
  transaction: z.string().nullable(),
});

export const LedgerPageSchema = component("LedgerPage", z.object({ data: z.array(LedgerItemSchema), nextCursor: z.string().nullable() }));

const UsageItemSchema = z.object({
  id: z.string(),
  createdAt: Timestamp,
  key: z.object({ id: z.string(), name: z.string(), prefix: z.string() }),
  model: z.string(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  usageEstimated: z.boolean(),
  burn: Diem,
  priceCents: Cents,
  cost: Usdc,
  latencyMs: z.number().int(),
});

export const UsagePageSchema = component("UsagePage", z.object({ data: z.array(UsageItemSchema), nextCursor: z.string().nullable() }));

const DailySpendSchema = z.object({ day: Day, requests: z.number().int(), cost: Usdc, burn: Diem });

export const DailySpendListSchema = component("DailySpendList", z.object({ data: z.array(DailySpendSchema) }));

// ─── inference ───────────────────────────────────────────────────────────────

export const ChatCompletionSchema = component(
  "ChatCompletion",
  z.object({
    id: z.string().describe("chatcmpl-…"),
    object: z.literal("chat.completion"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({ role: z.string(), content: z.string() }),
        finish_reason: z.string(),
      }),
    ),
    usage: z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() }),
  }),
);

// ─── market ──────────────────────────────────────────────────────────────────

export const ModelListSchema = component(
  "ModelList",
  z.object({
    object: z.literal("list"),
    data: z.array(
      z.object({
        id: z.string(),
        object: z.literal("model"),
        created: z.number().int(),
        owned_by: z.literal("svc"),
        name: z.string(),
        context_length: z.number().int(),
        max_output_tokens: z.number().int(),
        pricing: z.object({ input_diem_per_mtok: Diem, output_diem_per_mtok: Diem }),
        best_price_cents: Cents.nullable().describe("Cheapest offer on the book; null when nobody sells it right now"),
        offers: z.number().int(),
      }),
    ),
  }),
);

export const BookSchema = component(
  "Book",
  z.object({
    model: z.string(),
    day: Day,
    asOf: Timestamp,
    listPrice: ListPrice,
    bestPriceCents: Cents.nullable(),
    remainingDiem: Diem,
    offers: z.number().int(),
    suppliers: z.number().int(),
    levels: z.array(z.object({ priceCents: Cents, remainingDiem: Diem, offers: z.number().int() })).describe("Cheapest first"),
  }),
);

export const MarketModelListSchema = component(
  "MarketModelList",
  z.object({
    day: Day,
    asOf: Timestamp,
    data: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        listPrice: ListPrice,
        bestPriceCents: Cents.nullable(),
        remainingDiem: Diem,
        offers: z.number().int(),
        suppliers: z.number().int(),
      }),
    ),
  }),
);

export const MarketStatsSchema = component(
  "MarketStats",
  z.object({
    window: z.object({ from: Timestamp, to: Timestamp, hours: z.literal(24) }),
    clears: z.number().int(),
    volumeUsdc: Usdc,
    volumeDiem: Diem,
    vwapCents: z.string().nullable().describe("Volume-weighted average price, cents per diem with two decimals"),
    models: z.array(
      z.object({
        model: z.string(),
        clears: z.number().int(),
        volumeUsdc: Usdc,
        volumeDiem: Diem,
        vwapCents: z.string().nullable(),
        lowPriceCents: Cents,
        highPriceCents: Cents,
      }),
    ),
  }),
);

export const TradeListSchema = component(
  "TradeList",
  z.object({
    data: z.array(z.object({ time: Timestamp, model: z.string(), priceCents: Cents, burnDiem: Diem, valueUsdc: Usdc })),
  }),
);

const PoolModelFields = {
  dailyCapacityDiem: Diem,
  burnedTodayDiem: Diem,
  remainingTodayDiem: Diem,
  availableNowDiem: Diem,
  utilisation: z.number().describe("Burned today / daily capacity, 0..1"),
};

export const PoolSummarySchema = component(
  "PoolSummary",
  z.object({
    day: Day,
    asOf: Timestamp,
    suppliers: z.number().int(),
    offers: z.number().int(),
    offersCoolingDown: z.number().int(),
    ...PoolModelFields,
    models: z.array(
      z.object({
        model: z.string(),
        offers: z.number().int(),
        suppliers: z.number().int(),
        ...PoolModelFields,
        bestPriceCents: Cents.nullable(),
        medianPriceCents: Cents.nullable(),
      }),
    ),
  }),
);

// ─── supply ──────────────────────────────────────────────────────────────────

export const EarningsSchema = component("Earnings", z.object({ available: Usdc, withdrawn: Usdc, pending: Usdc }));

const OfferFields = {
  id: z.string(),
  status: z.enum(["active", "paused", "withdrawn"]),
  priceCents: Cents,
  dailyCapacity: Diem.describe("Diem per UTC day"),
  upstreamBaseUrl: z.string(),
  models: z.array(z.object({ id: z.string(), upstreamModel: z.string() })),
  today: z.object({ day: Day, burnedDiem: Diem, heldDiem: Diem, remainingDiem: Diem, resetsAt: Timestamp }),
  earningsUsdc: Usdc,
  clears: z.number().int(),
  health: z.object({
    status: z.enum(["healthy", "cooling_down"]),
    cooldownUntil: Timestamp.nullable(),
    consecutiveFailures: z.number().int(),
    lastFailureAt: Timestamp.nullable(),
    lastFailureReason: z.string().nullable(),
    lastSuccessAt: Timestamp.nullable(),
  }),
  onBook: z.boolean().describe("Routable right now: active, healthy and with capacity left today"),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

export const OfferSchema = component("Offer", z.object(OfferFields));

export const CheckedOfferSchema = component(
  "CheckedOffer",
  z.object({
    ...OfferFields,
    upstreamPricing: z
      .array(
        z.object({
          model: z.string(),
          upstreamModel: z.string(),
          listPrice: ListPrice,
          upstreamPrice: ListPrice.nullable(),
          comparison: z.enum(["same", "upstream_lower", "upstream_higher", "mixed", "unknown"]),
        }),
      )
      .optional()
      .describe("What the upstream publishes for each model next to our list price (present when the upstream was checked)"),
  }),
);

export const OfferListSchema = component("OfferList", z.object({ data: z.array(OfferSchema) }));

export const WithdrawalSchema = component(
  "Withdrawal",
  z.object({
    id: z.string(),
    amount: Usdc,
    toAddress: Address,
    status: z.enum(["pending", "sent", "failed"]),
    transaction: z.string().nullable(),
    failureReason: z.string().nullable(),
    createdAt: Timestamp,
    completedAt: Timestamp.nullable(),
  }),
);

export const WithdrawalListSchema = component("WithdrawalList", z.object({ data: z.array(WithdrawalSchema) }));

// ─── payments ────────────────────────────────────────────────────────────────

export const TopUpSchema = component(
  "TopUp",
  z.object({ credited: Usdc, balance: Usdc.describe("Available balance after the credit"), transaction: TxHash }),
);

export const PaymentChallengeSchema = component(
  "PaymentChallenge",
  z
    .object({
      x402Version: z.literal(1),
      error: z.string(),
      accepts: z.array(
        z.looseObject({
          scheme: z.literal("exact"),
          network: z.string(),
          maxAmountRequired: z.string().describe("Micro-USDC"),
          payTo: Address,
          asset: Address,
          maxTimeoutSeconds: z.number().int(),
          extra: z.looseObject({
            name: z.string().describe("EIP-712 domain name of the asset"),
            version: z.string().describe("EIP-712 domain version of the asset"),
            payer: Address.describe("The signed-in wallet: the authorization's `from` must be this address"),
          }),
        }),
      ),
    })
    .describe(
      "x402 v1 body of the 402; v2 clients read the base64 PAYMENT-REQUIRED header instead. Sign an EIP-3009 USDC authorization for exactly the amount and retry with PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1).",
    ),
);

// ─── operations ──────────────────────────────────────────────────────────────

export const HealthSchema = component(
  "Health",
  z.object({ status: z.enum(["ok", "degraded"]) }).describe("Nothing but the verdict: which part failed, and why, is logged, never answered."),
);

export const LedgerHealthSchema = component(
  "LedgerHealth",
  z.union([
    z.object({ ok: z.literal(true), checkedAt: Timestamp }),
    z.object({ ok: z.literal(false), checkedAt: Timestamp, violations: z.number().int() }),
    z.object({ ok: z.literal(false), checkedAt: Timestamp, error: z.literal("check_failed") }),
  ]),
);

export const OpenApiDocumentSchema = component("OpenApiDocument", z.looseObject({ openapi: z.string() }).describe("This document."));

const ERROR_CODES = Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS, ...(keyof typeof ERROR_STATUS)[]];

export const ErrorBodySchema = component(
  "Error",
  z
    .object({
      error: z.looseObject({
        message: z.string(),
        type: z.string().describe("OpenAI's error type for the status, e.g. invalid_request_error"),
        code: z.enum(ERROR_CODES),
      }),
    })
    .describe("Every error: OpenAI's shape. Some codes add machine-readable fields beside message/type/code (e.g. needed, available, param)."),
);

// ─── compile-time agreement with the domain ──────────────────────────────────

/** True when A and B are assignable both ways (the schema accepts exactly what the domain returns). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Out<S extends z.ZodType> = z.output<S>;
type Returned<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;

/** Each entry fails to compile when its schema and its domain type disagree. */
export const SCHEMAS_MATCH_DOMAIN: [
  Same<Out<typeof SiweChallengeSchema>, SiweChallenge>,
  Same<Out<typeof SessionSchema>, ReturnType<typeof describeSession>>,
  Same<Out<typeof AccountSchema>, AccountProfile>,
  Same<Out<typeof ApiKeySchema>, ApiKeyView>,
  Same<Out<typeof CreatedApiKeySchema>, ApiKeyView & { key: string }>,
  Same<Out<typeof ApiKeyListSchema>, Returned<typeof listApiKeys>>,
  Same<Out<typeof LedgerPageSchema>, LedgerPage>,
  Same<Out<typeof UsagePageSchema>, Returned<typeof listUsage>>,
  Same<Out<typeof DailySpendListSchema>, { data: Returned<typeof listDailySpend> }>,
  Same<Out<typeof ChatCompletionSchema>, ChatCompletionResponse>,
  Same<Out<typeof ModelListSchema>, Returned<typeof listModels>>,
  Same<Out<typeof BookSchema>, BookView>,
  Same<Out<typeof MarketModelListSchema>, Returned<typeof listMarketModels>>,
  Same<Out<typeof MarketStatsSchema>, MarketStats>,
  Same<Out<typeof TradeListSchema>, Returned<typeof listTrades>>,
  Same<Out<typeof PoolSummarySchema>, PoolSummary>,
  Same<Out<typeof EarningsSchema>, Earnings>,
  Same<Out<typeof OfferSchema>, OfferView>,
  Same<Out<typeof CheckedOfferSchema>, CheckedOfferView>,
  Same<Out<typeof OfferListSchema>, Returned<typeof listOffers>>,
  Same<Out<typeof WithdrawalSchema>, WithdrawalView>,
  Same<Out<typeof TopUpSchema>, ReturnType<typeof formatTopUp> & { transaction: Hash }>,
  Same<Out<typeof HealthSchema>, Returned<typeof getPublicHealth>>,
  Same<Out<typeof LedgerHealthSchema>, LedgerHealth>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];
