import "server-only";
import { disputeRate } from "@/lib/supply/offer-health";
import { emptyDepth, getActiveModels, getDepthByModel, type CatalogEntry, type ModelDepth } from "@/lib/market/book";
import type { MarketModelList, ModelList } from "@/lib/market/schemas";
import { formatMicros, usdPerToken } from "@/lib/money";
import { featuresOf, inputModalities, supportedParameters, type Features } from "@/lib/supply/features";
import { utcDayKey } from "@/lib/supply/capacity";
import { formatListPrice, LIST_PRICE_CENTS } from "@/lib/wire";

/** GET /v1/models: every active catalog model in OpenAI's list shape, with list price, best price and what it serves. */
export async function listModels(): Promise<ModelList> {
  const [models, depth] = await Promise.all([getActiveModels(), getDepthByModel()]);
  return {
    object: "list",
    data: [...models.values()].map((m) => {
      const features = servedFeatures(m, depth.get(m.id));
      const cents = depth.get(m.id)?.bestPriceCents ?? LIST_PRICE_CENTS;
      return {
        id: m.id,
        object: "model",
        created: Math.floor(m.createdAt.getTime() / 1000),
        owned_by: "svc",
        name: m.name,
        context_length: m.contextTokens,
        max_output_tokens: m.maxOutputTokens,
        pricing: {
          ...formatListPrice(m),
          prompt: usdPerToken(m.inputMicroDiemPerMTok, cents),
          completion: usdPerToken(m.outputMicroDiemPerMTok, cents),
          input_cache_read: m.cacheReadMicroDiemPerMTok === null ? null : usdPerToken(m.cacheReadMicroDiemPerMTok, cents),
          input_cache_write: m.cacheWriteMicroDiemPerMTok === null ? null : usdPerToken(m.cacheWriteMicroDiemPerMTok, cents),
        },
        best_price_cents: depth.get(m.id)?.bestPriceCents ?? null,
        offers: depth.get(m.id)?.offers ?? 0,
        supported_parameters: supportedParameters(features),
        input_modalities: inputModalities(features),
        bills_reasoning: m.billsReasoning,
      };
    }),
  };
}

/** What the offers on the book serve; the catalog's features when nobody sells the model right now. */
function servedFeatures(model: CatalogEntry, depth: ModelDepth | undefined): Features {
  const catalog = featuresOf(model);
  if (!depth || depth.offers === 0) return catalog;
  return {
    tools: catalog.tools && depth.features.tools,
    json_schema: catalog.json_schema && depth.features.json_schema,
    vision: catalog.vision && depth.features.vision,
  };
}

/** GET /v1/market/models: every active model with list price, best price, depth and dispute rate on the book. */
export async function listMarketModels(now?: Date): Promise<MarketModelList> {
  const [models, depth] = await Promise.all([getActiveModels(), getDepthByModel(now)]);
  const at = now ?? new Date();
  return {
    object: "list",
    day: utcDayKey(at),
    as_of: at.toISOString(),
    data: [...models.values()].map((m) => {
      const d = depth.get(m.id) ?? emptyDepth();
      return {
        id: m.id,
        name: m.name,
        list_price: formatListPrice(m),
        best_price_cents: d.bestPriceCents,
        remaining_diem: formatMicros(d.remainingMicroDiem),
        offers: d.offers,
        suppliers: d.suppliers,
        dispute_rate: disputeRate(d.clears, d.disputed),
      };
    }),
  };
}
