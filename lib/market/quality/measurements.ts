import "server-only";
import { db, Prisma } from "@/lib/db/client";
import { emptySums, LATENCY_BINS, statsBucket, windowStart, type WindowName, type WindowSums } from "@/lib/market/quality/figures";

/**
 * The 1 h and 24 h windows of offers' measurements (offer_stats), summed in one query: per offer and window the
 * counts, and the latency histogram added bin by bin. `offerIds` null reads every offer measured in the last 24 h
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
    )
    SELECT t.offer_id::text AS offer_id, t.win, t.forwards, t.answers, t.disputed, t.latency_ms_sum, t.completion_tokens,
           COALESCE(hs.bins, '{}') AS bins, COALESCE(hs.counts, '{}') AS counts
    FROM t LEFT JOIN hs ON hs.offer_id = t.offer_id AND hs.win = t.win`;
  const sums = new Map<string, Record<WindowName, WindowSums>>();
  for (const r of rows) {
    const offer = sums.get(r.offer_id) ?? { "1h": emptySums(), "24h": emptySums() };
    offer[r.win] = {
      forwards: r.forwards,
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
