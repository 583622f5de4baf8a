import { getActiveModels, getDepthByModel, type CatalogEntry, type ModelDepth } from "@/lib/market/book";
import { featuresOf, inputModalities, supportedParameters, type Features } from "@/lib/router/features";
import { formatMicros } from "@/lib/money";

export type ModelListing = {
  id: string;
  object: "model";
  created: number;
  owned_by: "svc";
  name: string;
  context_length: number;
  max_output_tokens: number;
  /** List price, diem per 1M tokens, as decimal strings. */
  pricing: { input_diem_per_mtok: string; output_diem_per_mtok: string };
  /** Cheapest offer on the book in cents per diem (100 = list price), null when nobody sells it right now. */
  best_price_cents: number | null;
  /** Offers on the book (active, healthy, capacity left today). */
  offers: number;
  /** The request parameters you can use with this model (OpenRouter's list): tools and structured_outputs only when an offer on the book serves them. */
  supported_parameters: string[];
  input_modalities: ("text" | "image")[];
};

/** The OpenAI-shaped model list: every active catalog model, with list price and best price on the book. */
export async function listModels(): Promise<{ object: "list"; data: ModelListing[] }> {
  const [models, depth] = await Promise.all([getActiveModels(), getDepthByModel()]);
  return {
    object: "list",
    data: [...models.values()].map((m) => {
      const features = servedFeatures(m, depth.get(m.id));
      return {
        id: m.id,
        object: "model",
        created: Math.floor(m.createdAt.getTime() / 1000),
        owned_by: "svc",
        name: m.name,
        context_length: m.contextTokens,
        max_output_tokens: m.maxOutputTokens,
        pricing: {
          input_diem_per_mtok: formatMicros(m.inputMicroDiemPerMTok),
          output_diem_per_mtok: formatMicros(m.outputMicroDiemPerMTok),
        },
        best_price_cents: depth.get(m.id)?.bestPriceCents ?? null,
        offers: depth.get(m.id)?.offers ?? 0,
        supported_parameters: supportedParameters(features),
        input_modalities: inputModalities(features),
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
