import "server-only";
import { db } from "@/lib/db";
import { AppError } from "@/lib/errors";
import { formatMicros } from "@/lib/money";
import { FEATURES, type Feature, type Features } from "@/lib/router/features";

/** A max price above every offer's (prices are integer cents): routable "at any price". */
const ANY_PRICE = 2_147_483_647;

type Diagnosis = {
  posted: bigint;
  serving: bigint;
  any_tools: boolean | null;
  any_json_schema: boolean | null;
  any_vision: boolean | null;
  cheapest_posted: number | null;
  at_or_below: bigint;
  healthy_at_or_below: bigint;
  routable_above: string;
  suggested: number | null;
};

/**
 * Explains a 503 in the four X-Svc-* headers and tells the buyer what max price would route:
 * no_offer_at_or_below_max (nothing posted at or below the max), no_healthy_supplier (offers at or below the
 * max are all cooling down after upstream failures), no_capacity (healthy offers at or below the max lack
 * today's capacity for this request's worst case), or no_offer_supports_<feature> (offers are posted, but none
 * serves a feature the request uses). Every figure counts only the offers serving the request's features, by the
 * routing rules themselves (prisma/functions/: svc_offer_healthy, svc_offer_remaining_micro_diem, svc_offer_on_book,
 * svc_offer_routable, svc_offer_model_serves), so the suggestion is a max price the reservation would route at.
 */
export async function noOfferError(input: {
  modelId: string;
  maxPriceCents: number;
  burnMicroDiem: bigint;
  features: Features;
  now: Date;
}) {
  const { tools, json_schema, vision } = input.features;
  const day = input.now.toISOString().slice(0, 10);
  const [d] = await db.$queryRaw<Diagnosis[]>`
    WITH o AS (
      SELECT o.price_cents,
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
      LEFT JOIN offer_days d ON d.offer_id = o.id AND d.day = ${day}::date
      WHERE o.status = 'active'
    )
    SELECT COUNT(*) AS posted, COUNT(*) FILTER (WHERE serves) AS serving,
           bool_or(supports_tools) AS any_tools, bool_or(supports_json_schema) AS any_json_schema, bool_or(supports_vision) AS any_vision,
           MIN(price_cents) FILTER (WHERE serves)::int AS cheapest_posted,
           COUNT(*) FILTER (WHERE serves AND price_cents <= ${input.maxPriceCents}) AS at_or_below,
           COUNT(*) FILTER (WHERE serves AND price_cents <= ${input.maxPriceCents} AND healthy) AS healthy_at_or_below,
           COALESCE(SUM(remaining) FILTER (WHERE serves AND price_cents > ${input.maxPriceCents} AND on_book), 0)::text AS routable_above,
           MIN(price_cents) FILTER (WHERE serves AND price_cents > ${input.maxPriceCents} AND takes_it)::int AS suggested
    FROM o`;

  const missing = d.posted > 0n && d.serving === 0n ? missingFeature(input.features, d) : null;
  if (missing) return featureError(input, missing, d);
  const code = d.at_or_below === 0n ? "no_offer_at_or_below_max" : d.healthy_at_or_below === 0n ? "no_healthy_supplier" : "no_capacity";
  const routableAbove = formatMicros(BigInt(d.routable_above));
  const reason = {
    no_offer_at_or_below_max: `No offer for ${input.modelId} is posted at or below your max price of ${input.maxPriceCents} cents per diem.`,
    no_healthy_supplier: `Every offer for ${input.modelId} at or below ${input.maxPriceCents} cents per diem is cooling down after upstream failures.`,
    no_capacity: `Offers for ${input.modelId} at or below ${input.maxPriceCents} cents per diem have no capacity left today for this request.`,
  }[code];
  const advice =
    d.suggested !== null
      ? ` A max price of ${d.suggested} would route it now (send X-Svc-Max-Cents: ${d.suggested}); ${routableAbove} diem is available above your max.`
      : " No offer above your max could take it either; try again later or lower max_tokens.";

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
