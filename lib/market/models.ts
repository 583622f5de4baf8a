import "server-only";
import { emptyDepth, getActiveModels, getDepthByModel } from "@/lib/market/book";
import type { MarketModelList, ModelList } from "@/lib/market/schemas";
import { formatMicros } from "@/lib/money";
import { utcDayKey } from "@/lib/supply/capacity";
import { formatListPrice } from "@/lib/wire";

/** GET /v1/models: every active catalog model in OpenAI's list shape, with list price and best price on the book. */
export async function listModels(): Promise<ModelList> {
  const [models, depth] = await Promise.all([getActiveModels(), getDepthByModel()]);
  return {
    object: "list",
    data: [...models.values()].map((m) => ({
      id: m.id,
      object: "model",
      created: Math.floor(m.createdAt.getTime() / 1000),
      owned_by: "svc",
      name: m.name,
      context_length: m.contextTokens,
      max_output_tokens: m.maxOutputTokens,
      pricing: formatListPrice(m),
      best_price_cents: depth.get(m.id)?.bestPriceCents ?? null,
      offers: depth.get(m.id)?.offers ?? 0,
    })),
  };
}

/** GET /v1/market/models: every active model with list price, best price and depth on the book. */
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
      };
    }),
  };
}
