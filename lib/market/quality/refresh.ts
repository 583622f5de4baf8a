import "server-only";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { KEEP_BUCKETS, statsBucket, windowFigures } from "@/lib/market/quality/figures";
import { readWindowSums } from "@/lib/market/quality/measurements";

/**
 * The routing snapshot (offer_quality): for every offer measured in the last 24 h, the median upstream latency and
 * the throughput of its 1 h window when that window has the minimum sample, else of its 24 h window, else null.
 * An offer not measured in the last 24 h loses its row (null, to a reader) while its older measurements are kept, and
 * measurements older than KEEP_BUCKETS buckets (two days) are deleted. The reservation reads the snapshot, never the measurements (a background job,
 * server/background-jobs.ts, runs this every QUALITY_REFRESH_MS on one instance).
 */
export async function refreshOfferQuality(now: Date = new Date()): Promise<{ offers: number; pruned: number }> {
  const sums = await readWindowSums(null, now);
  const ids: string[] = [];
  const latency: (number | null)[] = [];
  const throughput: (number | null)[] = [];
  for (const [offerId, windows] of sums) {
    const recent = windowFigures(windows["1h"], env.QUALITY_MIN_REQUESTS);
    const day = windowFigures(windows["24h"], env.QUALITY_MIN_REQUESTS);
    const chosen = recent.sufficient ? recent : day.sufficient ? day : null;
    ids.push(offerId);
    latency.push(chosen?.latency_ms?.p50 ?? null);
    throughput.push(chosen?.throughput_tps ?? null);
  }
  // In offer order, so concurrent refreshes (a lease handed over mid-run) lock the rows in one order.
  await db.$transaction([
    db.$executeRaw`
      INSERT INTO offer_quality (offer_id, latency_p50_ms, throughput_tps, refreshed_at)
      SELECT u.offer_id, u.latency, u.throughput, ${now}::timestamptz
      FROM unnest(${ids}::uuid[], ${latency}::int[], ${throughput}::float8[]) AS u(offer_id, latency, throughput)
      WHERE EXISTS (SELECT 1 FROM offers o WHERE o.id = u.offer_id)
      ORDER BY u.offer_id
      ON CONFLICT (offer_id) DO UPDATE
      SET latency_p50_ms = EXCLUDED.latency_p50_ms, throughput_tps = EXCLUDED.throughput_tps, refreshed_at = EXCLUDED.refreshed_at`,
    // Measured before (its buckets are still kept) but not in the last 24 h: nothing to say any more. A row of an offer
    // never measured here is not this job's to judge.
    db.$executeRaw`
      DELETE FROM offer_quality q
      WHERE NOT (q.offer_id = ANY(${ids}::uuid[])) AND EXISTS (SELECT 1 FROM offer_stats s WHERE s.offer_id = q.offer_id)`,
  ]);
  const pruned = await db.$executeRaw`DELETE FROM offer_stats WHERE bucket <= ${statsBucket(now) - KEEP_BUCKETS}::int`;
  return { offers: ids.length, pruned };
}
