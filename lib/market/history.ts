import "server-only";
import { db } from "@/lib/db/client";
import { cached } from "@/lib/market/cache";
import { vwapCents } from "@/lib/market/stats";
import { formatMicros } from "@/lib/money";
import type { HistoryInput, HistoryRange, MarketHistory } from "@/lib/market/schemas";
import { modelNotFound } from "@/lib/market/book";

/**
 * A model's price and volume over a time range, in buckets that start at round UTC times (epoch multiples of the
 * bucket size): every bucket of the range is in the answer, and one without clears says so (trades 0, no price),
 * so a chart can show the gap instead of drawing through it. One aggregate over the (model_id, created_at) index of
 * clears, shared for a few seconds.
 */

export const HISTORY_TTL_MS = 5_000;

const MINUTE = 60_000;
export const HISTORY_BUCKETS: Record<HistoryRange, { bucketMs: number; count: number }> = {
  "1h": { bucketMs: 5 * MINUTE, count: 12 },
  "1d": { bucketMs: 60 * MINUTE, count: 24 },
  "1w": { bucketMs: 6 * 60 * MINUTE, count: 28 },
};

type BucketRow = { bucket: string; trades: number; charge: string; burn: string; price_burn: string };

/** Cached for a few seconds unless `now` is given. */
export function getMarketHistory(input: HistoryInput, now?: Date): Promise<MarketHistory> {
  return now
    ? computeMarketHistory(input, now)
    : cached(`history:${input.range}:${input.model}`, HISTORY_TTL_MS, () => computeMarketHistory(input, new Date()));
}

export async function computeMarketHistory({ model, range }: HistoryInput, now: Date): Promise<MarketHistory> {
  const known = await db.model.findUnique({ where: { id: model }, select: { id: true } });
  if (!known) throw await modelNotFound(model);
  const { bucketMs, count } = HISTORY_BUCKETS[range];
  const fromMs = Math.floor(now.getTime() / bucketMs) * bucketMs - (count - 1) * bucketMs;
  const from = new Date(fromMs);
  // Bucket number relative to `from`, computed from whole milliseconds so it matches the buckets built below.
  const rows = await db.$queryRaw<BucketRow[]>`
    SELECT floor((extract(epoch FROM created_at) * 1000 - ${fromMs}::float8) / ${bucketMs}::float8)::int::text AS bucket,
           COUNT(*)::int AS trades, SUM(charge_micros)::text AS charge, SUM(burn_micro_diem)::text AS burn,
           SUM(price_cents::numeric * burn_micro_diem)::text AS price_burn
    FROM clears
    WHERE model_id = ${model} AND created_at >= ${from}::timestamptz AND created_at <= ${now}::timestamptz
    GROUP BY 1`;
  const byBucket = new Map(rows.map((r) => [Number(r.bucket), r]));
  return {
    object: "market.history",
    model,
    range,
    bucket_seconds: bucketMs / 1000,
    from: from.toISOString(),
    to: now.toISOString(),
    data: Array.from({ length: count }, (_, i) => {
      const row = byBucket.get(i);
      const burn = row ? BigInt(row.burn) : 0n;
      return {
        start: new Date(fromMs + i * bucketMs).toISOString(),
        trades: row?.trades ?? 0,
        volume_usdc: formatMicros(row ? BigInt(row.charge) : 0n),
        burn_diem: formatMicros(burn),
        vwap_cents: row ? vwapCents(BigInt(row.price_burn), burn) : null,
      };
    }),
  };
}
