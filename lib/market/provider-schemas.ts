/**
 * The `provider` object: how a buyer chooses among the offers of a model by more than price, with OpenRouter's names
 * where they mean the same. One schema for the chat request's and the Responses request's `provider`, and for the
 * defaults a key and an account hold (`provider_preferences`); the reservation merges them field by field, the
 * request's over the key's over the account's, and applies them in SQL (prisma/functions/svc_offer_preference_miss,
 * svc_reserve_batch). Client-safe: the docs quote the bounds.
 *
 * - Filters (an offer that fails one is not routed to): `only`, `ignore` (offer ids or supplier public ids `sup_…`),
 *   `quantizations`, `data_collection: "deny"` (no offer that retains or trains on prompts), `max_price` (USD per 1M
 *   prompt / completion tokens at the model's list price and the offer's price, beside the max price in cents per diem),
 *   `require_verified: true` (only offers whose fidelity probes passed: not unprobed, unverified or flagged ones).
 * - Order: `preferred_max_latency` and `preferred_min_throughput` put the offers that meet them first (soft: they never
 *   exclude; an offer without measured figures does not meet them), then `sort` (`price`, the default; `latency`,
 *   lowest median first; `throughput`, highest first; `quality`, lowest answer-check error rate first; offers without
 *   figures after those with), then price-time priority (price, posting time, id), which also decides every tie. A
 *   request that uses tools or a json_schema format routes to an offer demoted for its answer checks only after every
 *   other (lib/market/quality/answer-checks.ts), whatever the preferences.
 * - Cache affinity (issue 40): a request whose prompt prefix svc sent an offer that caches prompts, within its
 *   retention, is ordered by effective price (the cached part at the model's cache-read price), the offer holding the
 *   prefix first among equals; `cache_affinity: false` orders by posted price alone (billing is verified either way).
 * - Accepted with no effect: `require_parameters` (svc only ever routes to offers that serve every parameter the
 *   request uses, so `true` and `false` route alike) and `allow_fallbacks` (svc forwards once, by the spec: no fallback
 *   is ever tried after an upstream failure, whatever it says).
 * A null field is the same as an absent one (it does not clear a key's or account's default).
 */
import { z } from "zod";
import { QUANTIZATIONS } from "@/lib/supply/schemas";

export const PROVIDER_SORTS = ["price", "latency", "throughput", "quality"] as const;
export const DATA_COLLECTION = ["allow", "deny"] as const;
/** The most ids `only` and `ignore` may each list. */
export const MAX_PROVIDER_IDS = 64;
/** The most USD per 1M tokens a max_price may state. */
export const MAX_PRICE_USD_PER_MTOK = 1_000_000;
/** The most seconds preferred_max_latency may state. */
export const MAX_PREFERRED_LATENCY_S = 3600;
/** The most tokens per second preferred_min_throughput may state. */
export const MAX_PREFERRED_THROUGHPUT_TPS = 1_000_000;

const OFFER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SUPPLIER_ID = /^sup_[0-9a-f]{24}$/i;

/** An offer's id (a UUID) or a supplier's public id (`sup_` and 24 hex digits), in lower case. */
export const ProviderId = z
  .string()
  .max(64)
  .refine((id) => OFFER_ID.test(id) || SUPPLIER_ID.test(id), "must be an offer id (a UUID) or a supplier id (sup_ and 24 hex digits)")
  .transform((id) => id.toLowerCase())
  .describe(
    "An offer id (UUID) or a supplier's public id (sup_…, as GET /v1/market/models/{id}/offers and GET /v1/generations/{id} show it)",
  );

const IdList = (min: number, id: z.ZodType<string> = ProviderId) =>
  z.array(id).min(min, "must list at least one offer or supplier id").max(MAX_PROVIDER_IDS, `must list at most ${MAX_PROVIDER_IDS} ids`);

const UsdPerMTok = z
  .number({ error: "must be a number of USD per 1M tokens" })
  .min(0, "must be at least 0")
  .max(MAX_PRICE_USD_PER_MTOK, `must be at most ${MAX_PRICE_USD_PER_MTOK}`);

const providerFields = (id: z.ZodType<string>) => ({
  sort: z
    .enum(PROVIDER_SORTS, { error: 'must be "price", "latency", "throughput" or "quality"' })
    .nullish()
    .describe(
      "price (the default): cheapest first; latency: lowest measured median upstream latency first; throughput: highest measured output tokens per second first; quality: lowest answer-check error rate first (tool calls and strict json_schema answers that failed their schema). Offers without figures come after those with; ties keep price-time priority",
    ),
  only: IdList(1, id).nullish().describe("Route only to these offers, or to offers of these suppliers"),
  ignore: IdList(0, id).nullish().describe("Never route to these offers, nor to offers of these suppliers"),
  quantizations: z
    .array(z.enum(QUANTIZATIONS, { error: `must be one of ${QUANTIZATIONS.join(", ")}` }))
    .min(1, "must list at least one quantization")
    .max(QUANTIZATIONS.length * 2)
    .nullish()
    .describe("Route only to offers declaring one of these quantizations (unknown: the supplier has not said)"),
  data_collection: z
    .enum(DATA_COLLECTION, { error: 'must be "allow" or "deny"' })
    .nullish()
    .describe("deny: route only to offers declaring that they neither retain prompts nor train on them (allow, the default: any offer)"),
  cancelled_billing: z
    .enum(DATA_COLLECTION, { error: 'must be "allow" or "deny"' })
    .nullish()
    .describe(
      "deny: route only to offers whose upstream stops billing when a stream's client hangs up (not those declaring streaming.bills_cancelled_in_full, which svc reads to the end and bills in full); allow, the default: any offer",
    ),
  max_price: z
    .strictObject({
      prompt: UsdPerMTok.nullish().describe("USD per 1M prompt tokens at most"),
      completion: UsdPerMTok.nullish().describe("USD per 1M completion tokens at most"),
    })
    .nullish()
    .describe(
      "Route only to offers whose charge for 1M tokens (at the model's list price and the offer's price) is within these, beside the max price in cents per diem (X-Svc-Max-Cents)",
    ),
  preferred_max_latency: z
    .number({ error: "must be a number of seconds" })
    .positive("must be more than 0")
    .max(MAX_PREFERRED_LATENCY_S, `must be at most ${MAX_PREFERRED_LATENCY_S}`)
    .nullish()
    .describe("Seconds: offers whose measured median upstream latency is at most this come first (soft: never excludes)"),
  preferred_min_throughput: z
    .number({ error: "must be a number of tokens per second" })
    .positive("must be more than 0")
    .max(MAX_PREFERRED_THROUGHPUT_TPS, `must be at most ${MAX_PREFERRED_THROUGHPUT_TPS}`)
    .nullish()
    .describe("Tokens per second: offers whose measured output throughput is at least this come first (soft: never excludes)"),
  require_verified: z
    .boolean()
    .nullish()
    .describe(
      "true: route only to offers whose fidelity probes passed (probe.status passing on the offers list), never to one that is unprobed, unverified (posted while probes could not run), verifying or flagged; false, the default: any offer on the book",
    ),
  cache_affinity: z
    .boolean()
    .nullish()
    .describe(
      "true (the default): an offer that caches prompts and was sent this request's prompt prefix within its retention is preferred while its effective price (the cached part at the cache-read price) is the best; false: route by posted price alone",
    ),
  require_parameters: z
    .boolean()
    .nullish()
    .describe("Accepted with no effect: svc always routes only to offers that serve every parameter the request uses"),
  allow_fallbacks: z
    .boolean()
    .nullish()
    .describe("Accepted with no effect: svc forwards once and never falls back to another offer after an upstream failure"),
});
const ProviderFields = z.strictObject(providerFields(ProviderId));

export type ProviderPreferences = {
  sort?: (typeof PROVIDER_SORTS)[number];
  only?: string[];
  ignore?: string[];
  quantizations?: (typeof QUANTIZATIONS)[number][];
  data_collection?: (typeof DATA_COLLECTION)[number];
  cancelled_billing?: (typeof DATA_COLLECTION)[number];
  max_price?: { prompt?: number; completion?: number };
  require_verified?: boolean;
  preferred_max_latency?: number;
  preferred_min_throughput?: number;
  cache_affinity?: boolean;
  require_parameters?: boolean;
  allow_fallbacks?: boolean;
};

/** The `provider` object, validated and normalized: nulls dropped (a null field is an absent one), ids in lower case. */
export const ProviderPreferencesSchema = ProviderFields.transform((p): ProviderPreferences => {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(p)) {
    if (value === null || value === undefined || (Array.isArray(value) && value.length === 0)) continue;
    if (field === "max_price") {
      const mp = value as { prompt?: number | null; completion?: number | null };
      const price: { prompt?: number; completion?: number } = {};
      if (mp.prompt != null) price.prompt = mp.prompt;
      if (mp.completion != null) price.completion = mp.completion;
      if (Object.keys(price).length > 0) out.max_price = price;
      continue;
    }
    out[field] = value;
  }
  return out as ProviderPreferences;
}).describe(
  "How to choose among the offers of the model beyond price (OpenRouter's names). Merged field by field over the key's and the account's provider_preferences: the request's fields win, then the key's, then the account's",
);

/** Stored defaults as the views show them (what was set, nulls dropped). */
export const ProviderPreferencesView = z
  .object(providerFields(z.string()))
  .describe("Default provider preferences (the provider object of a chat request): under the request's own fields, field by field");

/** The preferences as the reservation takes them: null when there are none. */
export function preferencesOrNull(p: ProviderPreferences | null | undefined): ProviderPreferences | null {
  return p && Object.keys(p).length > 0 ? p : null;
}

/** The fields whose filter can leave no offer, in the order the reservation checks them (svc_offer_preference_miss). */
export const PREFERENCE_FILTERS = [
  "only",
  "ignore",
  "quantizations",
  "data_collection",
  "cancelled_billing",
  "max_price",
  "require_verified",
] as const;
export type PreferenceFilter = (typeof PREFERENCE_FILTERS)[number];
