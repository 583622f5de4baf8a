/** The public market's shapes on the wire: models, book, trades, stats, and the supply pool. */
import { z } from "zod";
import { Cents, component, Day, Diem, DisputeRate, ListPrice, listOf, Timestamp, Usdc } from "@/lib/wire";

export const ModelListingSchema = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.number().int(),
  owned_by: z.literal("svc"),
  name: z.string(),
  context_length: z.number().int(),
  max_output_tokens: z.number().int(),
  pricing: ListPrice,
  best_price_cents: Cents.nullable().describe("Cheapest offer on the book; null when nobody sells it right now"),
  offers: z.number().int().describe("Offers on the book (active, healthy, capacity left today)"),
  supported_parameters: z
    .array(z.string())
    .describe(
      "Request parameters usable with this model (OpenRouter's names); tools and structured_outputs appear when an offer on the book serves them",
    ),
  input_modalities: z.array(z.enum(["text", "image"])),
  bills_reasoning: z
    .boolean()
    .describe(
      "Its upstreams bill hidden reasoning: with reasoning_effort (other than none) you pay the reasoning tokens they report, within max_tokens",
    ),
});
export type ModelListing = z.output<typeof ModelListingSchema>;

export const ModelListSchema = component("ModelList", listOf(ModelListingSchema));
export type ModelList = z.output<typeof ModelListSchema>;

export const BookQuery = z.strictObject({ model: z.string().min(1).max(128) });

export const BookSchema = component(
  "Book",
  z.object({
    model: z.string(),
    day: Day,
    as_of: Timestamp,
    list_price: ListPrice,
    best_price_cents: Cents.nullable(),
    remaining_diem: Diem,
    offers: z.number().int(),
    suppliers: z.number().int(),
    dispute_rate: DisputeRate,
    levels: z
      .array(z.object({ price_cents: Cents, remaining_diem: Diem, offers: z.number().int(), dispute_rate: DisputeRate }))
      .describe("Cheapest first; capacity in diem left today at that price, and the dispute rate of that level's offers"),
  }),
);
export type BookView = z.output<typeof BookSchema>;

const MarketModelSchema = z.object({
  id: z.string(),
  name: z.string(),
  list_price: ListPrice,
  best_price_cents: Cents.nullable(),
  remaining_diem: Diem,
  offers: z.number().int(),
  suppliers: z.number().int(),
  dispute_rate: DisputeRate,
});
export type MarketModelView = z.output<typeof MarketModelSchema>;

export const MarketModelListSchema = component(
  "MarketModelList",
  z.object({ object: z.literal("list"), day: Day, as_of: Timestamp, data: z.array(MarketModelSchema) }),
);
export type MarketModelList = z.output<typeof MarketModelListSchema>;

const ModelStatsSchema = z.object({
  model: z.string(),
  clears: z.number().int(),
  volume_usdc: Usdc,
  volume_diem: Diem,
  vwap_cents: z.string().nullable().describe("Σ(price × burn) / Σ burn, cents per diem with two decimals; null without volume"),
  low_price_cents: Cents,
  high_price_cents: Cents,
});

export const MarketStatsSchema = component(
  "MarketStats",
  z.object({
    window: z.object({ from: Timestamp, to: Timestamp, hours: z.literal(24) }),
    clears: z.number().int(),
    volume_usdc: Usdc,
    volume_diem: Diem,
    vwap_cents: z.string().nullable().describe("Volume-weighted average price, cents per diem with two decimals"),
    models: z.array(ModelStatsSchema),
  }),
);
export type MarketStats = z.output<typeof MarketStatsSchema>;

export const TradesQuery = z.strictObject({
  model: z.string().min(1).max(128).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type TradesInput = z.infer<typeof TradesQuery>;

const TradeSchema = z.object({
  time: Timestamp,
  model: z.string(),
  price_cents: Cents,
  burn_diem: Diem.describe("Capacity consumed"),
  value_usdc: Usdc.describe("What the buyer paid"),
});
export type TradeView = z.output<typeof TradeSchema>;

export const TradeListSchema = component("TradeList", listOf(TradeSchema));
export type TradeList = z.output<typeof TradeListSchema>;

const PoolFields = {
  daily_capacity_diem: Diem,
  burned_today_diem: Diem,
  remaining_today_diem: Diem,
  available_now_diem: Diem.describe("On the book now: healthy offers' capacity left today"),
  utilisation: z.number().describe("Burned today / daily capacity, 0..1 (4 decimals)"),
};

const PoolModelSchema = z.object({
  model: z.string(),
  offers: z.number().int(),
  suppliers: z.number().int(),
  ...PoolFields,
  best_price_cents: Cents.nullable(),
  median_price_cents: Cents.nullable(),
});
export type PoolModel = z.output<typeof PoolModelSchema>;

export const PoolSummarySchema = component(
  "PoolSummary",
  z.object({
    day: Day,
    as_of: Timestamp,
    suppliers: z.number().int(),
    offers: z.number().int(),
    offers_cooling_down: z.number().int(),
    ...PoolFields,
    models: z.array(PoolModelSchema),
  }),
);
export type PoolSummary = z.output<typeof PoolSummarySchema>;
