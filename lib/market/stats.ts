import "server-only";
import { db } from "@/lib/db/client";
import { cached } from "@/lib/market/cache";
import { formatMicros } from "@/lib/money";
import type { MarketStats } from "@/lib/market/schemas";

/**
 * Market statistics over the last 24 hours: clears, volume in USDC and diem, and the
 * volume-weighted average price (VWAP, cents per diem, weighted by diem burned) per model.
 * One aggregate over the (created_at) range of clears, shared for a few seconds.
 */

export const STATS_TTL_MS = 5_000;
const WINDOW_MS = 24 * 3_600_000;

type StatsRow = { model_id: string; clears: number; charge: string; burn: string; price_burn: string; low: number; high: number };

/** Cached for a few seconds unless `now` is given. */
export function getMarketStats(now?: Date): Promise<MarketStats> {
  return now ? computeMarketStats(now) : cached("stats", STATS_TTL_MS, () => computeMarketStats(new Date()));
}

export async function computeMarketStats(now: Date): Promise<MarketStats> {
  const from = new Date(now.getTime() - WINDOW_MS);
  const rows = await db.$queryRaw<StatsRow[]>`
    SELECT model_id, COUNT(*)::int AS clears, SUM(charge_micros)::text AS charge, SUM(burn_micro_diem)::text AS burn,
           SUM(price_cents::numeric * burn_micro_diem)::text AS price_burn,
           MIN(price_cents)::int AS low, MAX(price_cents)::int AS high
    FROM clears
    WHERE created_at > ${from}::timestamptz AND created_at <= ${now}::timestamptz
    GROUP BY model_id ORDER BY model_id`;
  let clears = 0;
  let charge = 0n;
  let burn = 0n;
  let priceBurn = 0n;
  const models = rows.map((r) => {
    const m = { charge: BigInt(r.charge), burn: BigInt(r.burn), priceBurn: BigInt(r.price_burn) };
    clears += r.clears;
    charge += m.charge;
    burn += m.burn;
    priceBurn += m.priceBurn;
    return {
      model: r.model_id,
      clears: r.clears,
      volume_usdc: formatMicros(m.charge),
      volume_diem: formatMicros(m.burn),
      vwap_cents: vwapCents(m.priceBurn, m.burn),
      low_price_cents: r.low,
      high_price_cents: r.high,
    };
  });
  return {
    window: { from: from.toISOString(), to: now.toISOString(), hours: 24 },
    clears,
    volume_usdc: formatMicros(charge),
    volume_diem: formatMicros(burn),
    vwap_cents: vwapCents(priceBurn, burn),
    models,
  };
}

/** Σ(price × burn) / Σ burn in cents, rounded half up to two decimals, by integer arithmetic. */
export function vwapCents(priceBurn: bigint, burn: bigint): string | null {
  if (burn === 0n) return null;
  const hundredths = (priceBurn * 200n + burn) / (2n * burn);
  return `${hundredths / 100n}.${(hundredths % 100n).toString().padStart(2, "0")}`;
}
