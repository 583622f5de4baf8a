import { db } from "@/lib/db";
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
  /** Cheapest active offer in cents per diem (100 = list price), null when nobody sells it. */
  best_price_cents: number | null;
  offers: number;
};

/** The OpenAI-shaped model list: every active catalog model, with list price and best posted price. */
export async function listModels(): Promise<{ object: "list"; data: ModelListing[] }> {
  const [models, best] = await Promise.all([
    db.model.findMany({ where: { active: true }, orderBy: { id: "asc" } }),
    db.$queryRaw<{ model_id: string; best: number; offers: bigint }[]>`
      SELECT om.model_id, MIN(o.price_cents)::int AS best, COUNT(*) AS offers
      FROM offer_models om JOIN offers o ON o.id = om.offer_id
      WHERE o.status = 'active'
      GROUP BY om.model_id`,
  ]);
  const bestByModel = new Map(best.map((b) => [b.model_id, b]));
  return {
    object: "list",
    data: models.map((m) => ({
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
      best_price_cents: bestByModel.get(m.id)?.best ?? null,
      offers: Number(bestByModel.get(m.id)?.offers ?? 0n),
    })),
  };
}
