import "server-only";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { getActiveModels, onBookCondition, REMAINING, type CatalogEntry } from "@/lib/market/book";
import { cached } from "@/lib/market/cache";
import { probeViews, type ProbeColumns } from "@/lib/supply/probe-evidence";
import { emptySums, windowFigures } from "@/lib/market/quality/figures";
import { readAnswerChecks } from "@/lib/market/quality/answer-checks";
import { readWindowSums } from "@/lib/market/quality/measurements";
import type { ModelOfferList, ModelOfferView } from "@/lib/market/schemas";
import { chargeMicros, formatMicros } from "@/lib/money";
import { utcDayKey } from "@/lib/supply/capacity";
import { supplierPublicId } from "@/lib/supply/public-id";
import { formatListPrice, MODEL_ID_PATTERN } from "@/lib/wire";

/**
 * GET /v1/market/models/{id}/offers: each live offer of a model (active, on the book or not: flagged and delisted
 * ones included, marked), cheapest first, then oldest (price-time priority, the router's order), with what 1M tokens
 * cost at its price, its capacity left today, its measured windows (exact sums of offer_stats, not the routing
 * snapshot), what its supplier declares and what the probes found. Shared for OFFERS_TTL_MS like the other market
 * views; the model page renders it server-side.
 */

export const OFFERS_TTL_MS = 3_000;
/** At most this many offers are listed (the cheapest): a bound on what one request makes the server compute. */
export const MAX_MODEL_OFFERS = 200;

export async function listModelOffers(modelId: string, now?: Date): Promise<ModelOfferList> {
  const model = await activeModelOrNotFound(modelId);
  return now ? computeModelOffers(model, now) : cached(`offers:${model.id}`, OFFERS_TTL_MS, () => computeModelOffers(model, new Date()));
}

/** The model, or 400 for an id no model can have and 404 model_not_found for one that is unknown or retired. */
async function activeModelOrNotFound(modelId: string): Promise<CatalogEntry> {
  if (!MODEL_ID_PATTERN.test(modelId)) {
    throw new AppError("invalid_request", "id: must be a model id (letters, digits and . _ : / -, at most 128).", {
      details: { param: "id" },
    });
  }
  const model =
    (await getActiveModels()).get(modelId) ?? (await db.model.findFirst({ where: { id: modelId, active: true }, omit: { active: true } }));
  if (!model) {
    throw new AppError("model_not_found", `Unknown model "${modelId}"; see GET /v1/market/models for the models on this market.`, {
      details: { param: "id" },
    });
  }
  return model;
}

type OfferRow = {
  id: string;
  supplier_id: string;
  supplier_name: string | null;
  price_cents: number;
  created_at: Date;
  remaining: bigint;
  on_book: boolean;
  quantization: ModelOfferView["declared"]["quantization"];
  retains_prompts: boolean;
  trains_on_prompts: boolean;
  context_tokens: number | null;
  max_output_tokens: number | null;
  streams: boolean;
  bills_cancelled_in_full: boolean;
  answer_demoted: boolean;
  caches_prompts: boolean;
  cache_retention_seconds: number;
} & ProbeColumns;

async function computeModelOffers(model: CatalogEntry, now: Date): Promise<ModelOfferList> {
  const rows = await db.$queryRaw<OfferRow[]>`
    SELECT o.id::text AS id, o.supplier_id::text AS supplier_id, a.display_name AS supplier_name, o.price_cents, o.created_at,
           GREATEST(${REMAINING}, 0) AS remaining,
           ${onBookCondition(now)} AS on_book, o.quantization::text AS quantization, o.retains_prompts, o.trains_on_prompts,
           o.context_tokens, o.max_output_tokens, o.streams, o.bills_cancelled_in_full,
           o.caches_prompts, o.cache_retention_seconds, o.probe_status::text AS "probeStatus", o.probe_delisted AS "probeDelisted",
           o.probed_at AS "probedAt", o.probe_flagged_at AS "probeFlaggedAt", o.probe_flag_reason AS "probeFlagReason",
           COALESCE(q.answer_demoted, false) AS answer_demoted
    FROM offers o
    JOIN accounts a ON a.id = o.supplier_id
    LEFT JOIN offer_quality q ON q.offer_id = o.id
    JOIN offer_models om ON om.offer_id = o.id AND om.model_id = ${model.id}
    LEFT JOIN offer_days d ON d.offer_id = o.id AND d.day = ${utcDayKey(now)}::date
    WHERE o.status = 'active'
    ORDER BY o.price_cents, o.created_at, o.id
    LIMIT ${MAX_MODEL_OFFERS}`;
  const ids = rows.map((r) => r.id);
  const [sums, probes, checks] = await Promise.all([readWindowSums(ids, now), probeViews(rows), readAnswerChecks(ids, now)]);
  const min = { requests: env.QUALITY_MIN_REQUESTS, sources: env.QUALITY_MIN_SOURCES };
  return {
    object: "list",
    model: model.id,
    as_of: now.toISOString(),
    list_price: formatListPrice(model),
    min_requests: min.requests,
    min_sources: min.sources,
    data: rows.map((o) => {
      const measured = sums.get(o.id);
      return {
        id: o.id,
        supplier: supplierPublicId(o.supplier_id),
        supplier_name: o.supplier_name,
        price_cents: o.price_cents,
        usd_per_mtok: {
          prompt: formatMicros(chargeMicros(model.inputMicroDiemPerMTok, o.price_cents)),
          completion: formatMicros(chargeMicros(model.outputMicroDiemPerMTok, o.price_cents)),
          cached_prompt:
            o.caches_prompts && model.cacheReadMicroDiemPerMTok !== null
              ? formatMicros(chargeMicros(model.cacheReadMicroDiemPerMTok, o.price_cents))
              : null,
        },
        capacity_left_diem: formatMicros(o.remaining),
        on_book: o.on_book,
        created_at: o.created_at.toISOString(),
        declared: {
          quantization: o.quantization,
          data_policy: { retains_prompts: o.retains_prompts, trains_on_prompts: o.trains_on_prompts },
          // What it serves for this model: svc never forwards more than the model's limits, whatever the offer says.
          context_tokens: Math.min(o.context_tokens ?? model.contextTokens, model.contextTokens),
          max_output_tokens: Math.min(o.max_output_tokens ?? model.maxOutputTokens, model.maxOutputTokens),
          streaming: { streams: o.streams, bills_cancelled_in_full: o.bills_cancelled_in_full },
          prompt_caching: { caches_prompts: o.caches_prompts, retention_seconds: o.cache_retention_seconds },
        },
        measured: {
          "1h": windowFigures(measured?.["1h"] ?? emptySums(), min),
          "24h": windowFigures(measured?.["24h"] ?? emptySums(), min),
        },
        answer_checks: { ...checks.get(o.id)!, demoted: o.answer_demoted },
        probe: probes.get(o.id)!,
      };
    }),
  };
}
