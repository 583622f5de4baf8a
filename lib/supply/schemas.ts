/** A supplier's shapes on the wire: offers in and out, and earnings. Client-safe: the offer forms use these rules. */
import { z } from "zod";
import { parseMicros } from "@/lib/money";
import { Cents, component, Day, Diem, DisputeRate, Feature, ListPrice, listOf, PriceCents, Timestamp, Usdc } from "@/lib/wire";

// ─── what a supplier declares about an offer, and what the probes found (#23) ─────────────────────────────────

/** Quantizations a supplier can declare (OpenRouter's names). */
export const QUANTIZATIONS = ["fp16", "bf16", "fp8", "int8", "int4", "unknown"] as const;
export const Quantization = z.enum(QUANTIZATIONS).describe("The numeric format the upstream serves the model in, as declared");

const StreamingDeclaration = z.object({
  streams: z
    .boolean()
    .describe("The upstream streams (stream: true); when false, svc asks it without streaming and sends the answer as a stream"),
  bills_cancelled_in_full: z
    .boolean()
    .describe(
      "The upstream bills an answer in full even when its client hangs up: svc then reads a cancelled stream to its end (bounded by max_tokens and a time limit) and bills what was generated",
    ),
});

/** The longest prompt-cache retention an offer can commit to (a day), and the shortest (a minute). */
export const MAX_CACHE_RETENTION_SECONDS = 86_400;
export const MIN_CACHE_RETENTION_SECONDS = 60;

const PromptCachingDeclaration = z.object({
  caches_prompts: z
    .boolean()
    .describe(
      "The upstream caches prompt prefixes (vLLM, SGLang, llama.cpp prefix caching; a provider's prompt cache): cached prompt tokens are billed at the model's cache-read price, at least the prefix svc itself sent this offer within retention_seconds",
    ),
  retention_seconds: z
    .number()
    .int()
    .describe(
      "The least time the upstream keeps a prefix after it was last sent: svc counts a prefix it sent within it as cached whatever the upstream reports",
    ),
});

/** What the supplier declares about an offer (editable like the rest of it). */
export const DeclaredSchema = z.object({
  quantization: Quantization,
  data_policy: z
    .object({
      retains_prompts: z.boolean().describe("The upstream keeps prompts or answers after answering"),
      trains_on_prompts: z.boolean().describe("The upstream uses prompts or answers for training"),
    })
    .describe('An offer that has not said is shown retaining and training; provider.data_collection "deny" excludes either'),
  context_tokens: z.number().int().describe("The context it serves: its declared limit, else the model's"),
  max_output_tokens: z.number().int().describe("The output it serves: its declared limit, else the model's"),
  streaming: StreamingDeclaration.describe("How its upstream streams: whether it does, and how it bills an answer cancelled mid-stream"),
  prompt_caching: PromptCachingDeclaration.describe("Whether its upstream caches prompt prefixes, and for how long at least"),
});
export type DeclaredView = z.output<typeof DeclaredSchema>;

export const ProbeViewSchema = z.object({
  status: z
    .enum(["unprobed", "passing", "flagged", "verifying", "unverified"])
    .describe(
      "verifying: new or changed, off the book until its first probe set passes (seconds); unverified: probes could not run for it when it was posted or changed, and it serves unchecked; unprobed: posted before probation, not probed yet",
    ),
  delisted: z.boolean().describe("Off the book because of the flag, until a probe round passes again"),
  probed_at: Timestamp.nullable(),
  flagged_at: Timestamp.nullable(),
  reason: z.string().nullable().describe("Why it is flagged, in a sentence"),
  evidence: z
    .array(
      z.object({
        probe: z.string().describe("The probe's name"),
        check: z
          .string()
          .describe(
            "What failed: consensus, reference, model, answer, stop, max_tokens, json_schema, tool_schema, truncated, usage, error",
          ),
        expected: z.string().nullable(),
        got: z.string().nullable(),
        at: Timestamp,
      }),
    )
    .describe("The failed checks of the last round that flagged it (empty unless flagged)"),
});
export type ProbeView = z.output<typeof ProbeViewSchema>;

export const MAX_DAILY_CAPACITY_MICRO_DIEM = 1_000_000n * 1_000_000n; // one million diem per day

// ─── input ───────────────────────────────────────────────────────────────────

const DailyCapacity = z
  .string({ error: 'must be a decimal string of diem, e.g. "25" or "12.5"' })
  .max(32)
  .transform((text, ctx) => {
    const micros = parseMicros(text);
    if (micros === null) {
      ctx.addIssue({ code: "custom", message: 'must be a decimal string of diem with at most 6 decimals, e.g. "25" or "12.5"' });
      return z.NEVER;
    }
    if (micros <= 0n) {
      ctx.addIssue({ code: "custom", message: "must be greater than zero" });
      return z.NEVER;
    }
    if (micros > MAX_DAILY_CAPACITY_MICRO_DIEM) {
      ctx.addIssue({
        code: "custom",
        message: `must be at most ${(MAX_DAILY_CAPACITY_MICRO_DIEM / 1_000_000n).toLocaleString("en-US")} diem per day`,
      });
      return z.NEVER;
    }
    return micros;
  })
  .describe('Diem per UTC day, decimal string, e.g. "25"');

/** A form's capacity text checked by the API's own rule; null when valid. */
export function dailyCapacityProblem(text: string): string | null {
  const result = DailyCapacity.safeParse(text.trim());
  return result.success ? null : `Capacity ${result.error.issues[0].message}.`;
}

const UpstreamBaseUrl = z
  .string()
  .min(1)
  .max(2048)
  .describe("The supplier's OpenAI-compatible base URL (https), e.g. https://api.venice.ai/api/v1");
// Printable ASCII without spaces: anything else cannot travel in an Authorization header anyway.
const UpstreamApiKey = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces")
  .describe("The upstream API key; stored encrypted, never returned");

const ModelRef = z.union([
  z.string().min(1).max(128),
  z.strictObject({ id: z.string().min(1).max(128), upstream_model: z.string().min(1).max(256).optional() }),
]);
export const OfferModels = z.array(ModelRef).min(1, "must name at least one model").max(64);

/** The largest context or output an offer can declare (above any model's: what it serves is capped by the model's). */
export const MAX_DECLARED_TOKENS = 10_000_000;

// What the supplier declares about its upstream (its word; the platform's fidelity probes are its check).
const DataPolicy = z
  .strictObject({
    retains_prompts: z.boolean().describe("The upstream keeps prompts or answers after answering"),
    trains_on_prompts: z.boolean().describe("The upstream uses prompts or answers for training"),
  })
  .describe("Both required when given; an offer that has not said is shown retaining and training");
const DeclaredTokens = z
  .number()
  .int()
  .min(1)
  .max(MAX_DECLARED_TOKENS)
  .describe("A limit the upstream serves below the model's own; unset means the model's");
const StreamingInput = z
  .strictObject({ streams: z.boolean().optional(), bills_cancelled_in_full: z.boolean().optional() })
  .describe("How the upstream streams (each field optional; unset: it streams, and stops billing when its client hangs up)");
const PromptCachingInput = z
  .strictObject({
    caches_prompts: z.boolean().optional(),
    retention_seconds: z.number().int().min(MIN_CACHE_RETENTION_SECONDS).max(MAX_CACHE_RETENTION_SECONDS).optional(),
  })
  .describe(
    "Whether the upstream caches prompt prefixes, and the least time it keeps one after it was last sent, 60 to 86,400 seconds (each field optional; unset: it does not cache, 300 s)",
  );
const Declarations = {
  streaming: StreamingInput.optional(),
  prompt_caching: PromptCachingInput.optional(),
  quantization: Quantization.optional(),
  data_policy: DataPolicy.optional(),
  context_tokens: DeclaredTokens.optional(),
  max_output_tokens: DeclaredTokens.optional(),
};

export const CreateOfferBody = z.strictObject({
  upstream_base_url: UpstreamBaseUrl,
  upstream_api_key: UpstreamApiKey,
  models: OfferModels,
  price_cents: PriceCents,
  daily_capacity: DailyCapacity,
  ...Declarations,
});
export type CreateOfferInput = z.infer<typeof CreateOfferBody>;

export const UpdateOfferBody = z
  .strictObject({
    upstream_base_url: UpstreamBaseUrl.optional(),
    upstream_api_key: UpstreamApiKey.optional(),
    models: OfferModels.optional(),
    price_cents: PriceCents.optional(),
    daily_capacity: DailyCapacity.optional(),
    status: z.enum(["active", "paused"]).optional(),
    ...Declarations,
    context_tokens: DeclaredTokens.nullable().optional().describe("null: back to the model's limit"),
    max_output_tokens: DeclaredTokens.nullable().optional().describe("null: back to the model's limit"),
  })
  .refine((patch) => Object.values(patch).some((v) => v !== undefined), "name at least one field to change");
export type UpdateOfferInput = z.infer<typeof UpdateOfferBody>;

export const ListOffersQuery = z.strictObject({ status: z.enum(["active", "paused", "withdrawn"]).optional() });

// ─── output ──────────────────────────────────────────────────────────────────

export const OfferHealthSchema = z.object({
  status: z.enum(["healthy", "cooling_down"]),
  cooldown_until: Timestamp.nullable(),
  consecutive_failures: z.number().int(),
  last_failure_at: Timestamp.nullable(),
  last_failure_reason: z.string().nullable(),
  last_success_at: Timestamp.nullable(),
  disputes: z
    .object({ window_days: z.number().int(), clears: z.number().int(), disputed: z.number().int(), dispute_rate: DisputeRate })
    .describe("Clears whose claimed usage exceeded our own count beyond the tolerance (billed at our count)"),
});
export type OfferHealthView = z.output<typeof OfferHealthSchema>;

const OfferFields = {
  id: z.string(),
  status: z.enum(["active", "paused", "withdrawn"]),
  price_cents: Cents,
  daily_capacity: Diem.describe("Diem per UTC day"),
  upstream_base_url: z.string(),
  models: z.array(
    z.object({
      id: z.string(),
      upstream_model: z.string(),
      features: z
        .array(Feature)
        .describe("What this offer serves for the model: its catalog features less what the upstream said it lacks"),
    }),
  ),
  today: z
    .object({ day: Day, burned_diem: Diem, held_diem: Diem, remaining_diem: Diem, resets_at: Timestamp })
    .describe("Today's (UTC) use; capacity resets at `resets_at`"),
  earnings_usdc: Usdc.describe("Sum of this offer's clears' supplier share"),
  clears: z.number().int(),
  health: OfferHealthSchema,
  declared: DeclaredSchema.describe(
    "What you declare about the upstream; a limit you did not declare is the smallest of your models' own (the public offers list shows each model's)",
  ),
  probe: ProbeViewSchema.describe(
    "What the platform's fidelity probes last found (GET /docs/probes); a flagged offer shows the evidence, and while delisted it is off the book",
  ),
  on_book: z.boolean().describe("Routable right now: active, healthy, not delisted by a probe, and with capacity left today"),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const OfferSchema = component("Offer", z.object(OfferFields));
export type OfferView = z.output<typeof OfferSchema>;

const UpstreamPricingSchema = z.object({
  model: z.string(),
  upstream_model: z.string(),
  list_price: ListPrice,
  upstream_price: ListPrice.nullable(),
  comparison: z.enum(["same", "upstream_lower", "upstream_higher", "mixed", "unknown"]),
});
export type UpstreamPricingView = z.output<typeof UpstreamPricingSchema>;
export type PricingComparison = UpstreamPricingView["comparison"];

export const CheckedOfferSchema = component(
  "CheckedOffer",
  z.object({
    ...OfferFields,
    upstream_pricing: z
      .array(UpstreamPricingSchema)
      .optional()
      .describe("What the upstream publishes for each model next to our list price (present when the upstream was checked)"),
  }),
);
export type CheckedOfferView = z.output<typeof CheckedOfferSchema>;

export const OfferListSchema = component("OfferList", listOf(OfferSchema));
export type OfferList = z.output<typeof OfferListSchema>;

export const EarningsSchema = component(
  "Earnings",
  z
    .object({ available: Usdc, withdrawn: Usdc, pending: Usdc })
    .describe(
      "`available` to withdraw (net of withdrawals in flight), `withdrawn` (sent on chain), `pending` (debited, not yet confirmed)",
    ),
);
export type Earnings = z.output<typeof EarningsSchema>;

export const DailyEarningsQuery = z.strictObject({ days: z.coerce.number().int().min(1).max(90).default(30) });

const DailyEarningsSchema = z.object({
  day: Day,
  offer: z.string().describe("Your offer's id"),
  earned: Usdc.describe("What its clears (and the platform's probes) credited your earnings that day"),
  requests: z.number().int().describe("Clears and probes that day"),
});
export type DailyEarnings = z.output<typeof DailyEarningsSchema>;

export const DailyEarningsListSchema = component(
  "DailyEarningsList",
  listOf(DailyEarningsSchema).describe("Per UTC day and offer, oldest first; days and offers without earnings are omitted"),
);
export type DailyEarningsList = z.output<typeof DailyEarningsListSchema>;
