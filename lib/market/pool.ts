import "server-only";
import { db, Prisma } from "@/lib/db/client";
import { getDepthByModel, medianPriceCents, onBookCondition, REMAINING } from "@/lib/market/book";
import { cached } from "@/lib/market/cache";
import { formatMicros } from "@/lib/money";
import { utcDayKey } from "@/lib/supply/capacity";
import type { PoolSummary } from "@/lib/market/schemas";

/**
 * GET /v1/supply/pool/summary: the supply pool today (UTC). The pool is every active offer, including
 * ones cooling down after upstream failures or already sold out today; `available_now_diem` and the
 * prices are what is on the book (see lib/market/book.ts), so they agree with the market views.
 * Per-model capacity overlaps when one offer serves several models.
 */

export const POOL_TTL_MS = 5_000;

type TotalsRow = {
  suppliers: number;
  offers: number;
  cooling: number;
  capacity: string;
  burned: string;
  remaining: string;
  available: string;
};
type ModelRow = {
  model_id: string;
  offers: number;
  suppliers: number;
  capacity: string;
  burned: string;
  remaining: string;
  available: string;
};

/** Cached for a few seconds unless `now` is given. */
export function getPoolSummary(now?: Date): Promise<PoolSummary> {
  return now ? computePoolSummary(now) : cached("pool", POOL_TTL_MS, () => computePoolSummary(new Date()));
}

export async function computePoolSummary(now: Date): Promise<PoolSummary> {
  const day = utcDayKey(now);
  // The book's own rules (lib/market/book.ts): what is available now is what is on the book.
  const healthy = Prisma.sql`svc_offer_healthy(o.unhealthy_until, ${now}::timestamptz)`;
  const remaining = Prisma.sql`GREATEST(${REMAINING}, 0)`;
  const aggregates = Prisma.sql`
    COUNT(*)::int AS offers, COUNT(DISTINCT o.supplier_id)::int AS suppliers,
    COALESCE(SUM(o.daily_capacity_micro_diem), 0)::text AS capacity,
    COALESCE(SUM(d.burned_micro_diem), 0)::text AS burned,
    COALESCE(SUM(${remaining}), 0)::text AS remaining,
    COALESCE(SUM(${remaining}) FILTER (WHERE ${onBookCondition(now)}), 0)::text AS available`;
  const today = Prisma.sql`LEFT JOIN offer_days d ON d.offer_id = o.id AND d.day = ${day}::date`;
  const [[totals], perModel, depth] = await Promise.all([
    db.$queryRaw<TotalsRow[]>`
      SELECT ${aggregates}, (COUNT(*) FILTER (WHERE NOT ${healthy}))::int AS cooling
      FROM offers o ${today}
      WHERE o.status = 'active'`,
    db.$queryRaw<ModelRow[]>`
      SELECT om.model_id, ${aggregates}
      FROM offer_models om JOIN offers o ON o.id = om.offer_id ${today}
      WHERE o.status = 'active'
      GROUP BY om.model_id ORDER BY om.model_id`,
    getDepthByModel(now),
  ]);
  return {
    day,
    as_of: now.toISOString(),
    suppliers: totals.suppliers,
    offers: totals.offers,
    offers_cooling_down: totals.cooling,
    daily_capacity_diem: formatMicros(BigInt(totals.capacity)),
    burned_today_diem: formatMicros(BigInt(totals.burned)),
    remaining_today_diem: formatMicros(BigInt(totals.remaining)),
    available_now_diem: formatMicros(BigInt(totals.available)),
    utilisation: ratio(BigInt(totals.burned), BigInt(totals.capacity)),
    models: perModel.map((row) => {
      const d = depth.get(row.model_id);
      return {
        model: row.model_id,
        offers: row.offers,
        suppliers: row.suppliers,
        daily_capacity_diem: formatMicros(BigInt(row.capacity)),
        burned_today_diem: formatMicros(BigInt(row.burned)),
        remaining_today_diem: formatMicros(BigInt(row.remaining)),
        available_now_diem: formatMicros(BigInt(row.available)),
        best_price_cents: d?.bestPriceCents ?? null,
        median_price_cents: d ? medianPriceCents(d.levels) : null,
        utilisation: ratio(BigInt(row.burned), BigInt(row.capacity)),
      };
    }),
  };
}

function ratio(part: bigint, whole: bigint): number {
  return whole === 0n ? 0 : Number((part * 10_000n) / whole) / 10_000;
}
