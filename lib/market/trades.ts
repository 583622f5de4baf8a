import { z } from "zod";
import { db } from "@/lib/db";
import { AppError } from "@/lib/http/errors";
import { formatMicros } from "@/lib/money";

/**
 * Recent clears, newest first, without identities: no wallets, no offer, hold or completion ids.
 * Read straight from the clears indexes ((model_id, created_at) with a model, (created_at) without),
 * so the cost is the page size, not the table size.
 */

export const TradesQuery = z.strictObject({
  model: z.string().min(1).max(128).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export type TradesInput = z.infer<typeof TradesQuery>;

export type TradeView = {
  time: string;
  model: string;
  priceCents: number;
  /** Capacity consumed, diem decimal string. */
  burnDiem: string;
  /** What the buyer paid, USDC decimal string. */
  valueUsdc: string;
};

type TradeRow = { created_at: Date; model_id: string; price_cents: number; burn: string; charge: string };

export async function listTrades(input: TradesInput): Promise<{ data: TradeView[] }> {
  if (input.model !== undefined) {
    const model = await db.model.findUnique({ where: { id: input.model }, select: { id: true } });
    if (!model) throw new AppError("model_not_found", `Unknown model "${input.model}"; see GET /v1/models.`);
  }
  const rows =
    input.model === undefined
      ? await db.$queryRaw<TradeRow[]>`
          SELECT created_at, model_id, price_cents, burn_micro_diem::text AS burn, charge_micros::text AS charge
          FROM clears ORDER BY created_at DESC, id DESC LIMIT ${input.limit}`
      : await db.$queryRaw<TradeRow[]>`
          SELECT created_at, model_id, price_cents, burn_micro_diem::text AS burn, charge_micros::text AS charge
          FROM clears WHERE model_id = ${input.model} ORDER BY created_at DESC, id DESC LIMIT ${input.limit}`;
  return {
    data: rows.map((r) => ({
      time: new Date(r.created_at).toISOString(),
      model: r.model_id,
      priceCents: r.price_cents,
      burnDiem: formatMicros(BigInt(r.burn)),
      valueUsdc: formatMicros(BigInt(r.charge)),
    })),
  };
}
