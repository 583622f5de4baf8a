/** The public market's shapes on the wire: models, book, trades, stats, and the supply pool. */
import { z } from "zod";
import { Cents, component, Day, Diem, DisputeRate, ListPrice, listOf, Timestamp, Usdc } from "@/lib/wire";
import { DeclaredSchema, ProbeViewSchema } from "@/lib/supply/schemas";

export const ModelListingSchema = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.number().int(),
  owned_by: z.literal("svc"),
  name: z.string(),
  context_length: z.number().int(),
  max_output_tokens: z.number().int(),
  pricing: ListPrice.extend({
    prompt: z
      .string()
      .regex(/^\d+(\.\d{1,12})?$/)
      .describe(
        "USD per prompt token, as OpenRouter's pricing.prompt: the list price at best_price_cents (at the list price, 100 cents per diem, when nobody sells it), by the charge rule",
      ),
    completion: z
      .string()
      .regex(/^\d+(\.\d{1,12})?$/)
      .describe("USD per completion token, as pricing.prompt"),
    input_cache_read: z
      .string()
      .regex(/^\d+(\.\d{1,12})?$/)
      .nullable()
      .describe("USD per cached prompt token (OpenRouter's pricing.input_cache_read), as pricing.prompt; null: no cache price"),
    input_cache_write: z
      .string()
      .regex(/^\d+(\.\d{1,12})?$/)
      .nullable()
      .describe("USD per prompt token written to the cache (OpenRouter's pricing.input_cache_write); null: none"),
  }).describe(
    "List price in diem per 1M tokens, and (prompt, completion) what a token costs in USD at the cheapest offer, as OpenRouter's `pricing`",
  ),
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

export const HISTORY_RANGES = ["1h", "1d", "1w"] as const;
export type HistoryRange = (typeof HISTORY_RANGES)[number];

export const HistoryQuery = z.strictObject({
  model: z.string().min(1).max(128),
  range: z.enum(HISTORY_RANGES).default("1d").describe("1h: 5-minute buckets; 1d: hourly; 1w: 6-hourly. Buckets start at round UTC times."),
});
export type HistoryInput = z.infer<typeof HistoryQuery>;

const HistoryBucketSchema = z.object({
  start: Timestamp.describe("Start of the bucket (inclusive); it ends where the next starts"),
  trades: z.number().int().describe("Clears in the bucket; 0 is a bucket without trades, not a missing one"),
  volume_usdc: Usdc.describe("What buyers paid in the bucket"),
  burn_diem: Diem.describe("Capacity consumed in the bucket"),
  vwap_cents: z.string().nullable().describe("Volume-weighted price, cents per diem with two decimals; null without trades"),
});
export type HistoryBucket = z.output<typeof HistoryBucketSchema>;

export const MarketHistorySchema = component(
  "MarketHistory",
  z.object({
    object: z.literal("market.history"),
    model: z.string(),
    range: z.enum(HISTORY_RANGES),
    bucket_seconds: z.number().int(),
    from: Timestamp.describe("Start of the first bucket"),
    to: Timestamp.describe("When the history was read (the last bucket is still filling)"),
    data: z.array(HistoryBucketSchema).describe("Every bucket from `from` to `to`, oldest first, empty ones included"),
  }),
);
export type MarketHistory = z.output<typeof MarketHistorySchema>;

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

// ─── market quality (#23): each offer of a model, priced, measured, declared and checked ──────────────────────

/** One rolling window of measurements from real traffic (not probes). */
export const MeasuredWindowSchema = z.object({
  requests: z
    .number()
    .int()
    .describe(
      "Forwards measured in the window: answers billed plus failures that were the supplier's, never its own accounts' and at most a few per buyer account and hour",
    ),
  sources: z.number().int().describe("Distinct buyer accounts (the platform's probes counting as one) whose forwards the window measured"),
  sufficient: z
    .boolean()
    .describe("At least the minimum sample of forwards and of sources; when false every figure below is null rather than noise"),
  success_rate: z.number().min(0).max(1).nullable().describe("Answers billed / forwards (4 decimals)"),
  dispute_rate: z.number().min(0).max(1).nullable().describe("Answers whose claimed usage exceeded svc's count / answers (4 decimals)"),
  latency_ms: z
    .object({ p50: z.number().int(), p95: z.number().int() })
    .nullable()
    .describe("Upstream latency of answered forwards, from the forward sent to the answer read"),
  throughput_tps: z.number().nullable().describe("Completion tokens per second of upstream time (1 decimal)"),
});
export type MeasuredWindowView = z.output<typeof MeasuredWindowSchema>;

/** One kind of answer check over the window: what was checked, what failed and how. */
export const AnswerCheckFiguresSchema = z.object({
  checked: z.number().int(),
  failed: z.number().int(),
  invalid_json: z.number().int().describe("Not JSON (or nested past the limit)"),
  unknown_tool: z.number().int().describe("A tool call naming a tool the request did not send"),
  schema_mismatch: z.number().int().describe("JSON that does not satisfy the request's schema"),
  error_rate: z.number().min(0).max(1).nullable().describe("failed / checked (4 decimals); null when nothing was checked"),
});

export const ModelOfferSchema = z.object({
  id: z.string().describe("The offer's id (usable in provider.only and provider.ignore)"),
  supplier: z.string().describe("The supplier's public id, sup_… (usable in provider.only and provider.ignore)"),
  supplier_name: z.string().nullable().describe("The name the supplier chose (PATCH /v1/account display_name); null = none"),
  price_cents: Cents,
  usd_per_mtok: z
    .object({
      prompt: Usdc,
      completion: Usdc,
      cached_prompt: Usdc.nullable().describe(
        "1M cached prompt tokens at the model's cache-read price, on an offer that caches prompts; null otherwise",
      ),
    })
    .describe("What 1M input and 1M output tokens cost at this price (the model's list price × price_cents / 100)"),
  capacity_left_diem: Diem.describe("Capacity left today (UTC)"),
  on_book: z.boolean().describe("Routable now: active, healthy, not delisted, capacity left"),
  created_at: Timestamp.describe("Posting time: the tie-break among equal prices"),
  declared: DeclaredSchema,
  measured: z.object({ "1h": MeasuredWindowSchema, "24h": MeasuredWindowSchema }),
  answer_checks: z
    .object({
      window_days: z.number().int(),
      tool_calls: AnswerCheckFiguresSchema,
      json_schema: AnswerCheckFiguresSchema,
      error_rate: z
        .number()
        .min(0)
        .max(1)
        .nullable()
        .describe(
          "Both kinds' failed / checked (4 decimals), once enough answers were checked; null before. provider.sort quality orders by it",
        ),
      demoted: z
        .boolean()
        .describe(
          "Routing's latest snapshot puts it last for requests with tools or a json_schema format: its error rate stands well above the median of a model it serves",
        ),
    })
    .describe(
      "Live traffic's answers checked against their requests after they were served: each tool call parses, names a sent tool and satisfies its schema; each strict json_schema answer satisfies its schema",
    ),
  probe: ProbeViewSchema,
});
export type ModelOfferView = z.output<typeof ModelOfferSchema>;

export const ModelOfferListSchema = component(
  "ModelOfferList",
  z.object({
    object: z.literal("list"),
    model: z.string(),
    as_of: Timestamp,
    list_price: ListPrice,
    min_requests: z.number().int().describe("The forwards a window needs before its figures are shown"),
    min_sources: z
      .number()
      .int()
      .describe("The distinct sources (buyer accounts; the probes as one) a window needs before its figures are shown"),
    data: z.array(ModelOfferSchema).describe("Each live offer (active; flagged ones included, marked): cheapest first, then oldest"),
  }),
);
export type ModelOfferList = z.output<typeof ModelOfferListSchema>;
