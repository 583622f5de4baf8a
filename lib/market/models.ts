import { getActiveModels, getDepthByModel } from "@/lib/market/book";
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
};

/** The OpenAI-shaped model list: every active catalog model, with list price and best price on the book. */
export async function listModels(): Promise<{ object: "list"; data: ModelListing[] }> {
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
      pricing: {
        input_diem_per_mtok: formatMicros(m.inputMicroDiemPerMTok),
        output_diem_per_mtok: formatMicros(m.outputMicroDiemPerMTok),
      },
      best_price_cents: depth.get(m.id)?.bestPriceCents ?? null,
      offers: depth.get(m.id)?.offers ?? 0,
    })),
  };
}
