import "server-only";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { formatMicros } from "@/lib/money";
import { FEATURES, type Feature, type Features } from "@/lib/supply/features";
import { PREFERENCE_FILTERS, type PreferenceFilter, type ProviderPreferences } from "@/lib/market/provider-schemas";

/** A max price above every offer's (prices are integer cents): routable "at any price". */
const ANY_PRICE = 2_147_483_647;

type Diagnosis = {
  posted: bigint;
  serving: bigint;
  any_tools: boolean | null;
  any_json_schema: boolean | null;
  any_vision: boolean | null;
  cheapest_posted: number | null;
  /** The furthest preference filter (svc_offer_preference_miss) an offer failed, when every serving offer failed one. */
  preference_miss: PreferenceFilter | null;
  chosen: bigint;
  fitting: bigint;
  at_or_below: bigint;
  listed_at_or_below: bigint;
  healthy_at_or_below: bigint;
  routable_above: string;
  suggested: number | null;
};

/**
 * Explains a 503 in the four X-Svc-* headers and tells the buyer what max price would route. In the order the
 * causes are told apart: no_offer_supports_<feature> (offers are posted, but none serves a feature the request uses),
 * no_offer_matches_provider_<filter> (the buyer's provider preferences, merged from the request, the key and the
 * account, exclude every offer that serves it: the furthest filter any offer reached, in svc_offer_preference_miss's
 * order only, ignore, quantizations, data_collection, cancelled_billing, max_price, require_verified), no_offer_fits_request (the offers left declare a
 * smaller context or output cap than this request's worst case), no_offer_at_or_below_max (nothing posted at or
 * below the max), no_offer_passing_probes (offers at or below the max are all off the book after a failed fidelity
 * probe), no_healthy_supplier (they are all cooling down after upstream failures), no_capacity (healthy listed offers
 * at or below the max lack today's capacity for this request's worst case). Every figure past the features counts
 * only the offers the preferences and the size leave, by the routing rules themselves (prisma/functions/:
 * svc_offer_healthy, svc_offer_remaining_micro_diem, svc_offer_on_book, svc_offer_routable, svc_offer_model_serves,
 * svc_offer_preference_miss, svc_offer_fits_request), so the suggestion is a max price the reservation would route at.
 * Off the hot path: it runs only after a reservation found no offer.
 */
export async function noOfferError(input: {
  modelId: string;
  maxPriceCents: number;
  burnMicroDiem: bigint;
  /** The request's worst case as reserved (svc_offer_fits_request). */
  promptTokens: number;
  outputTokens: number;
  features: Features;
  /** The merged provider preferences the reservation routed by (null: none). */
  preferences: ProviderPreferences | null;
  /** The API key's own cap (X-Svc-Max-Cents above it is refused): a suggestion above it says so. */
  keyMaxPriceCents?: number | null;
  now: Date;
}) {
  const { tools, json_schema, vision } = input.features;
  const day = input.now.toISOString().slice(0, 10);
  const prefs = input.preferences === null ? null : JSON.stringify(input.preferences);
  const filters = [...PREFERENCE_FILTERS];
  const [d] = await db.$queryRaw<Diagnosis[]>`
    WITH o AS (
      SELECT o.price_cents, o.probe_delisted,
             svc_offer_preference_miss(${prefs}::jsonb, o.id, o.supplier_id, o.quantization::text, o.retains_prompts,
                                       o.trains_on_prompts, o.bills_cancelled_in_full, o.price_cents, m.input_micro_diem_per_mtok,
                                       m.output_micro_diem_per_mtok, o.probe_status::text) AS miss,
             svc_offer_fits_request(o.context_tokens, o.max_output_tokens, ${input.promptTokens}::int, ${input.outputTokens}::int) AS fits,
             svc_offer_healthy(o.unhealthy_until, ${input.now}::timestamptz) AS healthy,
             svc_offer_remaining_micro_diem(o.daily_capacity_micro_diem, d.burned_micro_diem, d.held_micro_diem) AS remaining,
             svc_offer_on_book(o.status, o.unhealthy_until, o.probe_delisted, o.daily_capacity_micro_diem, d.burned_micro_diem,
                               d.held_micro_diem, ${input.now}::timestamptz) AS on_book,
             svc_offer_routable(o.status, o.unhealthy_until, o.probe_delisted, o.price_cents, o.daily_capacity_micro_diem, d.burned_micro_diem,
                                d.held_micro_diem, ${ANY_PRICE}::int, ${input.burnMicroDiem}::bigint, ${input.now}::timestamptz) AS takes_it,
             om.supports_tools, om.supports_json_schema, om.supports_vision,
             svc_offer_model_serves(om.supports_tools, om.supports_json_schema, om.supports_vision,
                                    ${tools}::boolean, ${json_schema}::boolean, ${vision}::boolean) AS serves
      FROM offers o
      JOIN offer_models om ON om.offer_id = o.id AND om.model_id = ${input.modelId}
      JOIN models m ON m.id = om.model_id
      LEFT JOIN offer_days d ON d.offer_id = o.id AND d.day = ${day}::date
      WHERE o.status = 'active'
    ), c AS (
      SELECT *, serves AND miss IS NULL AND fits AS eligible FROM o
    )
    SELECT COUNT(*) AS posted, COUNT(*) FILTER (WHERE serves) AS serving,
           bool_or(supports_tools) AS any_tools, bool_or(supports_json_schema) AS any_json_schema, bool_or(supports_vision) AS any_vision,
           MIN(price_cents) FILTER (WHERE serves)::int AS cheapest_posted,
           (${filters}::text[])[MAX(array_position(${filters}::text[], miss)) FILTER (WHERE serves)] AS preference_miss,
           COUNT(*) FILTER (WHERE serves AND miss IS NULL) AS chosen,
           COUNT(*) FILTER (WHERE eligible) AS fitting,
           COUNT(*) FILTER (WHERE eligible AND price_cents <= ${input.maxPriceCents}) AS at_or_below,
           COUNT(*) FILTER (WHERE eligible AND price_cents <= ${input.maxPriceCents} AND NOT probe_delisted) AS listed_at_or_below,
           COUNT(*) FILTER (WHERE eligible AND price_cents <= ${input.maxPriceCents} AND NOT probe_delisted AND healthy) AS healthy_at_or_below,
           COALESCE(SUM(remaining) FILTER (WHERE eligible AND price_cents > ${input.maxPriceCents} AND on_book), 0)::text AS routable_above,
           MIN(price_cents) FILTER (WHERE eligible AND price_cents > ${input.maxPriceCents} AND takes_it)::int AS suggested
    FROM c`;

  const missing = d.posted > 0n && d.serving === 0n ? missingFeature(input.features, d) : null;
  if (missing) return featureError(input, missing, d);
  if (d.serving > 0n && d.chosen === 0n && d.preference_miss !== null) return preferenceError(input, d.preference_miss, d);
  if (d.chosen > 0n && d.fitting === 0n) return sizeError(input, d);
  const code =
    d.at_or_below === 0n
      ? "no_offer_at_or_below_max"
      : d.listed_at_or_below === 0n
        ? "no_offer_passing_probes"
        : d.healthy_at_or_below === 0n
          ? "no_healthy_supplier"
          : "no_capacity";
  const routableAbove = formatMicros(BigInt(d.routable_above));
  // The figures count only what the provider preferences leave: say so when they set some posted offers aside.
  const left = d.chosen < d.serving ? ` that your provider preferences leave (${d.chosen} of the ${d.serving} posted)` : "";
  const reason = {
    no_offer_at_or_below_max: `No offer for ${input.modelId}${left} is posted at or below your max price of ${input.maxPriceCents} cents per diem.`,
    no_offer_passing_probes: `Every offer for ${input.modelId} at or below ${input.maxPriceCents} cents per diem is off the book after failing a fidelity probe.`,
    no_healthy_supplier: `Every offer for ${input.modelId} at or below ${input.maxPriceCents} cents per diem is cooling down after upstream failures.`,
    no_capacity: `Offers for ${input.modelId} at or below ${input.maxPriceCents} cents per diem have no capacity left today for this request.`,
  }[code];
  const cap = input.keyMaxPriceCents ?? null;
  const advice =
    d.suggested === null
      ? " No offer above your max could take it either; try again later or lower max_tokens."
      : cap !== null && d.suggested > cap
        ? ` A max price of ${d.suggested} would route it now, above this API key's cap of ${cap} cents per diem: raise the key's max_price_cents or use another key; ${routableAbove} diem is available above your max.`
        : ` A max price of ${d.suggested} would route it now (send X-Svc-Max-Cents: ${d.suggested}); ${routableAbove} diem is available above your max.`;

  return new AppError(code, reason + advice, explanation(code, input.maxPriceCents, d, routableAbove));
}

function explanation(code: string, maxPriceCents: number, d: Diagnosis, routableAbove: string) {
  return {
    headers: {
      "x-svc-error-code": code,
      "x-svc-buyer-max-cents": String(maxPriceCents),
      "x-svc-cheapest-posted-cents": d.cheapest_posted === null ? "" : String(d.cheapest_posted),
      "x-svc-routable-diem-above-max": routableAbove,
    },
    details: {
      buyer_max_cents: maxPriceCents,
      cheapest_posted_cents: d.cheapest_posted,
      routable_diem_above_max: routableAbove,
      suggested_max_cents: d.suggested,
    },
  };
}

const FEATURE_WORDING: Record<Feature, { what: string; field: string }> = {
  tools: { what: "function tools", field: "tools" },
  json_schema: { what: "json_schema structured outputs", field: "response_format" },
  vision: { what: "image inputs", field: "the image_url parts" },
};

/** The first feature the request uses that no posted offer serves; else (each is served, never all by one offer) the last one it uses. */
function missingFeature(features: Features, d: Diagnosis): Feature {
  const served: Features = { tools: d.any_tools === true, json_schema: d.any_json_schema === true, vision: d.any_vision === true };
  const used = FEATURES.filter((f) => features[f]);
  return used.find((f) => !served[f]) ?? used.at(-1)!;
}

function featureError(input: { modelId: string; maxPriceCents: number }, feature: Feature, d: Diagnosis) {
  const code = `no_offer_supports_${feature}` as const;
  const { what, field } = FEATURE_WORDING[feature];
  const { headers, details } = explanation(code, input.maxPriceCents, d, "0.000000");
  return new AppError(
    code,
    `No offer for ${input.modelId} serves ${what} right now (${d.posted} posted without it; GET /v1/models lists each model's supported_parameters). Try another model, or send the request without ${field}.`,
    { headers, details: { ...details, param: feature === "vision" ? "messages" : field, missing_feature: feature } },
  );
}

const PREFERENCE_WORDING: Record<PreferenceFilter, string> = {
  only: "is among the offers and suppliers provider.only lists",
  ignore: "is left once provider.ignore's offers and suppliers are set aside",
  quantizations: "declares a quantization provider.quantizations allows",
  data_collection: "declares that it neither retains prompts nor trains on them (provider.data_collection: deny)",
  cancelled_billing: "stops billing when a stream's client hangs up (provider.cancelled_billing: deny)",
  max_price: "is within provider.max_price (USD per 1M tokens)",
  require_verified: "has passed its fidelity probes (provider.require_verified: true)",
};

/** The buyer's provider preferences leave no offer: the furthest filter any offer reached names the cause. */
function preferenceError(input: { modelId: string; maxPriceCents: number }, filter: PreferenceFilter, d: Diagnosis) {
  const code = `no_offer_matches_provider_${filter}` as const;
  const { headers, details } = explanation(code, input.maxPriceCents, d, "0.000000");
  const earlier = PREFERENCE_FILTERS.slice(0, PREFERENCE_FILTERS.indexOf(filter));
  return new AppError(
    code,
    `No offer for ${input.modelId} that serves this request ${PREFERENCE_WORDING[filter]}` +
      (earlier.length > 0 ? ` among those your other provider preferences leave` : "") +
      ` (${d.serving} posted serve it). Your provider preferences merge the request's provider object over the key's and the account's provider_preferences; relax provider.${filter} to be served.`,
    { headers, details: { ...details, param: `provider.${filter}` } },
  );
}

/** The offers left declare a smaller context or output cap than this request's worst case. */
function sizeError(input: { modelId: string; maxPriceCents: number; promptTokens: number; outputTokens: number }, d: Diagnosis) {
  const { headers, details } = explanation("no_offer_fits_request", input.maxPriceCents, d, "0.000000");
  return new AppError(
    "no_offer_fits_request",
    `No offer for ${input.modelId} declares a context and output cap this request fits: its worst case is ${input.promptTokens} prompt tokens ` +
      `and ${input.outputTokens} output tokens (max_tokens, or the model's output cap when it is not sent). Send a smaller max_tokens or a shorter prompt.`,
    { headers, details: { ...details, prompt_tokens: input.promptTokens, max_output_tokens: input.outputTokens } },
  );
}
