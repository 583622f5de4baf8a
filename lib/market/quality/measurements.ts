import "server-only";
import { db, Prisma } from "@/lib/db/client";
import { log } from "@/lib/log";
import {
  emptySums,
  LATENCY_BINS,
  PROBE_SOURCE_ID,
  statsBucket,
  statsHour,
  windowStart,
  type WindowName,
  type WindowSums,
} from "@/lib/market/quality/figures";

/**
 * The 1 h and 24 h windows of offers' measurements (offer_stats), summed in one query: per offer and window the
 * counts, the latency histogram added bin by bin, and the distinct sources measured in the hours the window's buckets
 * fall in (offer_stat_sources). `offerIds` null reads every offer measured in the last 24 h
 * (the refresh job); the offers list passes the model's offers.
 */
export async function readWindowSums(offerIds: readonly string[] | null, now: Date): Promise<Map<string, Record<WindowName, WindowSums>>> {
  const from24h = windowStart("24h", now);
  const from1h = windowStart("1h", now);
  const to = statsBucket(now);
  const which = offerIds === null ? Prisma.empty : Prisma.sql`AND s.offer_id = ANY(${[...offerIds]}::uuid[])`;
  const rows = await db.$queryRaw<
    {
      offer_id: string;
      win: WindowName;
      forwards: number;
      answers: number;
      disputed: number;
      latency_ms_sum: bigint;
      completion_tokens: bigint;
      /** Histogram elements (1-based: element k counts bin k − 1) with their summed counts. */
      bins: number[];
      counts: number[];
      sources: number;
    }[]
  >`
    WITH b AS MATERIALIZED (
      SELECT s.offer_id, s.forwards, s.answers, s.disputed, s.latency_ms_sum, s.completion_tokens, s.latency_histogram,
             s.bucket >= ${from1h}::int AS recent
      FROM offer_stats s
      WHERE s.bucket BETWEEN ${from24h}::int AND ${to}::int ${which}
    ), w AS (
      SELECT b.*, '24h'::text AS win FROM b
      UNION ALL
      SELECT b.*, '1h'::text AS win FROM b WHERE b.recent
    ), t AS (
      SELECT w.offer_id, w.win, SUM(w.forwards)::int AS forwards, SUM(w.answers)::int AS answers,
             SUM(w.disputed)::int AS disputed, SUM(w.latency_ms_sum)::bigint AS latency_ms_sum,
             SUM(w.completion_tokens)::bigint AS completion_tokens
      FROM w GROUP BY w.offer_id, w.win
    ), h AS (
      SELECT w.offer_id, w.win, x.k, SUM(x.v)::int AS n
      FROM w CROSS JOIN LATERAL unnest(w.latency_histogram) WITH ORDINALITY AS x(v, k)
      GROUP BY w.offer_id, w.win, x.k
    ), hs AS (
      SELECT h.offer_id, h.win, array_agg(h.k::int ORDER BY h.k) AS bins, array_agg(h.n ORDER BY h.k) AS counts
      FROM h GROUP BY h.offer_id, h.win
    ), src AS (
      SELECT s.offer_id, COUNT(DISTINCT s.source_id)::int AS all_day,
             COUNT(DISTINCT s.source_id) FILTER (WHERE s.hour >= ${statsHour(from1h)}::int)::int AS recent
      FROM offer_stat_sources s
      WHERE s.hour BETWEEN ${statsHour(from24h)}::int AND ${statsHour(to)}::int
        AND s.offer_id IN (SELECT DISTINCT t.offer_id FROM t)
      GROUP BY s.offer_id
    )
    SELECT t.offer_id::text AS offer_id, t.win, t.forwards, t.answers, t.disputed, t.latency_ms_sum, t.completion_tokens,
           COALESCE(hs.bins, '{}') AS bins, COALESCE(hs.counts, '{}') AS counts,
           COALESCE(CASE WHEN t.win = '1h' THEN src.recent ELSE src.all_day END, 0) AS sources
    FROM t LEFT JOIN hs ON hs.offer_id = t.offer_id AND hs.win = t.win
    LEFT JOIN src ON src.offer_id = t.offer_id`;
  const sums = new Map<string, Record<WindowName, WindowSums>>();
  for (const r of rows) {
    const offer = sums.get(r.offer_id) ?? { "1h": emptySums(), "24h": emptySums() };
    offer[r.win] = {
      forwards: r.forwards,
      sources: r.sources,
      answers: r.answers,
      disputed: r.disputed,
      latencyMsSum: r.latency_ms_sum,
      completionTokens: r.completion_tokens,
      histogram: dense(r.bins, r.counts),
    };
    sums.set(r.offer_id, offer);
  }
  return sums;
}

function dense(bins: number[], counts: number[]): number[] {
  const histogram = new Array<number>(LATENCY_BINS).fill(0);
  bins.forEach((k, i) => {
    if (k >= 1 && k <= LATENCY_BINS) histogram[k - 1] += counts[i];
  });
  return histogram;
}

/**
 * A probe's forward, measured as buyers' are (#37): answered (its upstream latency and the completion tokens billed)
 * into the offer's bucket by svc_record_offer_answers, or unanswered (an outage, a failed HTTP answer) as a forward
 * alone. The probes are one source (PROBE_SOURCE_ID), not capped. Never throws: a lost measurement is logged.
 */
export async function recordProbeForward(
  offerId: string,
  answer: { latencyMs: number; completionTokens: number } | null,
  now: Date = new Date(),
): Promise<void> {
  try {
    if (answer) {
      await db.$executeRaw`
        SELECT svc_record_offer_answers(ARRAY[${offerId}::uuid], ARRAY[${PROBE_SOURCE_ID}::uuid],
                                        ARRAY[${Math.max(0, Math.round(answer.latencyMs))}::bigint],
                                        ARRAY[${answer.completionTokens}::bigint], ARRAY[false], ${now}::timestamptz)`;
    } else {
      await db.$executeRaw`
        INSERT INTO offer_stats AS s (offer_id, bucket, forwards)
        SELECT ${offerId}::uuid, svc_offer_stats_bucket(${now}::timestamptz), 1
        WHERE (svc_offer_stats_counted(ARRAY[${offerId}::uuid], ARRAY[${PROBE_SOURCE_ID}::uuid], ${now}::timestamptz))[1]
        ON CONFLICT (offer_id, bucket) DO UPDATE SET forwards = s.forwards + 1`;
    }
  } catch (error) {
    log.warn("probe measurement not recorded", { offerId, error });
  }
}
