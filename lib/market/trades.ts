import "server-only";
import { db } from "@/lib/db/client";
import { formatMicros } from "@/lib/money";
import type { TradeList, TradesInput } from "@/lib/market/schemas";
import { modelNotFound } from "@/lib/market/book";

/**
 * Recent clears, newest first, without identities: no wallets, no offer, hold or completion ids.
 * Read straight from the clears indexes ((model_id, created_at) with a model, (created_at) without),
 * so the cost is the page size, not the table size.
 */

type TradeRow = { created_at: Date; model_id: string; price_cents: number; burn: string; charge: string };

export async function listTrades(input: TradesInput): Promise<TradeList> {
  if (input.model !== undefined) {
    const model = await db.model.findUnique({ where: { id: input.model }, select: { id: true } });
    if (!model) throw await modelNotFound(input.model);
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
    object: "list",
    data: rows.map((r) => ({
      time: new Date(r.created_at).toISOString(),
      model: r.model_id,
      price_cents: r.price_cents,
      burn_diem: formatMicros(BigInt(r.burn)),
      value_usdc: formatMicros(BigInt(r.charge)),
    })),
  };
}
