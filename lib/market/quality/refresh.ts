import "server-only";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { KEEP_BUCKETS, statsBucket, statsHour, windowFigures } from "@/lib/market/quality/figures";
import { readWindowSums } from "@/lib/market/quality/measurements";
import { readAnswerStandings } from "@/lib/market/quality/answer-checks";

/**
 * The routing snapshot (offer_quality): for every offer measured in the last 24 h, the median upstream latency and
 * the throughput of its 1 h window when that window has the minimum sample, else of its 24 h window, else null; and
 * for every offer with answers checked in the checks' window, its error rate and whether it is demoted
 * (answer-checks.ts).
 * An offer not measured in the last 24 h loses its row (null, to a reader) while its older measurements are kept, and
 * measurements older than KEEP_BUCKETS buckets (two days) are deleted. The reservation reads the snapshot, never the measurements (a background job,
 * server/background-jobs.ts, runs this every QUALITY_REFRESH_MS on one instance).
 */
export async function refreshOfferQuality(now: Date = new Date()): Promise<{ offers: number; pruned: number }> {
  const [sums, standings] = await Promise.all([readWindowSums(null, now), readAnswerStandings(now)]);
  const min = { requests: env.QUALITY_MIN_REQUESTS, sources: env.QUALITY_MIN_SOURCES };
  const ids: string[] = [];
  const latency: (number | null)[] = [];
  const throughput: (number | null)[] = [];
  const errorRate: (number | null)[] = [];
  const demoted: boolean[] = [];
  for (const offerId of new Set([...sums.keys(), ...standings.keys()])) {
    const windows = sums.get(offerId);
    const recent = windows ? windowFigures(windows["1h"], min) : null;
    const day = windows ? windowFigures(windows["24h"], min) : null;
    const chosen = recent?.sufficient ? recent : day?.sufficient ? day : null;
    const standing = standings.get(offerId);
    ids.push(offerId);
    latency.push(chosen?.latency_ms?.p50 ?? null);
    throughput.push(chosen?.throughput_tps ?? null);
    errorRate.push(standing?.errorRate ?? null);
    demoted.push(standing?.demoted ?? false);
  }
  // In offer order, so concurrent refreshes (a lease handed over mid-run) lock the rows in one order.
  await db.$transaction([
    db.$executeRaw`
      INSERT INTO offer_quality (offer_id, latency_p50_ms, throughput_tps, answer_error_rate, answer_demoted, refreshed_at)
      SELECT u.offer_id, u.latency, u.throughput, u.error_rate, u.demoted, ${now}::timestamptz
      FROM unnest(${ids}::uuid[], ${latency}::int[], ${throughput}::float8[], ${errorRate}::float8[], ${demoted}::boolean[])
        AS u(offer_id, latency, throughput, error_rate, demoted)
      WHERE EXISTS (SELECT 1 FROM offers o WHERE o.id = u.offer_id)
      ORDER BY u.offer_id
      ON CONFLICT (offer_id) DO UPDATE
      SET latency_p50_ms = EXCLUDED.latency_p50_ms, throughput_tps = EXCLUDED.throughput_tps,
          answer_error_rate = EXCLUDED.answer_error_rate, answer_demoted = EXCLUDED.answer_demoted, refreshed_at = EXCLUDED.refreshed_at`,
    // Measured before (its buckets are still kept) but not in the last 24 h: nothing to say any more. A row of an offer
    // never measured here is not this job's to judge.
    db.$executeRaw`
      DELETE FROM offer_quality q
      WHERE NOT (q.offer_id = ANY(${ids}::uuid[]))
        AND (EXISTS (SELECT 1 FROM offer_stats s WHERE s.offer_id = q.offer_id)
             OR EXISTS (SELECT 1 FROM offer_answer_checks c WHERE c.offer_id = q.offer_id))`,
  ]);
  const oldest = statsBucket(now) - KEEP_BUCKETS;
  const pruned = await db.$executeRaw`DELETE FROM offer_stats WHERE bucket <= ${oldest}::int`;
  await db.$executeRaw`DELETE FROM offer_stat_sources WHERE hour < ${statsHour(oldest)}::int`;
  return { offers: ids.length, pruned };
}
