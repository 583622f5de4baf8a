/**
 * Market quality, measured from real traffic (issue 23): the rules that turn an offer's measurements (offer_stats,
 * written by the clear and the failure report) into the figures the offers list publishes and routing sorts by.
 *
 * - A **forward** is a request sent to the offer's upstream that either was answered and billed (the clear counts it)
 *   or failed by the supplier's fault (cause "upstream" or "answer": lib/router/upstream-failure.ts). Failures the
 *   request explains, our own pool's timeouts and the upstream's 400/413/422 (the buyer's errors) are not forwards of
 *   the offer's; an answer billed whose claimed usage was out of bounds is an answer.
 * - success rate = answers / forwards; dispute rate = disputed answers / answers; latency p50/p95 over answers, read
 *   from a histogram of fixed log-scale bins (exact to the bin, interpolated inside it); throughput = completion
 *   tokens / seconds of upstream latency, over answers.
 * - Windows are whole 5-minute buckets: "1h" is the current bucket and the 11 before it (55 to 60 minutes of
 *   traffic), "24h" the current and the 287 before it. A window with fewer than QUALITY_MIN_REQUESTS forwards, or
 *   measured from fewer than QUALITY_MIN_SOURCES sources, is not sufficient: its figures are null.
 * - Nobody can buy a figure (#37): only traffic the supplier does not control is measured. A forward by the offer's own
 *   supplier (its account, which pays for all its keys) is never measured, and a buyer account's forwards to one offer
 *   are measured up to SAMPLES_PER_SOURCE_HOUR per hour (svc_offer_stats_counted); the platform's probes are measured
 *   too, as one source, uncapped. A source is a buyer account or the probes; a window's sources are those measured in
 *   the hours its buckets fall in.
 *
 * Pure: the SQL rules it mirrors live in prisma/functions/svc_offer_stats_bucket.sql and svc_latency_bin.sql
 * (tests/integration/quality-rules.test.ts holds each pair together).
 */
import "server-only";
import type { MeasuredWindowView } from "@/lib/market/schemas";

export const BUCKET_MS = 5 * 60_000;
/** Buckets per window, the current one included. */
export const WINDOWS = { "1h": 12, "24h": 288 } as const;
export type WindowName = keyof typeof WINDOWS;
/** The most forwards of one buyer account measured per offer and hour: the mirror of svc_quality_source_cap. */
export const SAMPLES_PER_SOURCE_HOUR = 3;
/** The source the platform's probes are measured as (svc_offer_stats_counted: uncapped). */
export const PROBE_SOURCE_ID = "00000000-0000-0000-0000-000000000000";
/** The hour of a stats bucket (offer_stat_sources.hour). */
export function statsHour(bucket: number): number {
  return Math.floor(bucket / 12);
}

/** Measurements older than this are deleted by the refresh job: an offer holds at most 576 buckets. */
export const KEEP_BUCKETS = 2 * 288;

/** The 5-minute bucket of a measurement at `at`: the mirror of svc_offer_stats_bucket. */
export function statsBucket(at: Date): number {
  return Math.floor(Math.floor(at.getTime() / 1000) / 300);
}

/** The first bucket of a window ending with the bucket of `now`. */
export function windowStart(window: WindowName, now: Date): number {
  return statsBucket(now) - WINDOWS[window] + 1;
}

/** Lower bounds (ms) of latency bins 1…31 (2^(k/2) rounded, k = 6…36): bin 0 is [0, 8), bin 31 is 262,144 ms and over. */
export const LATENCY_BIN_LOWER_BOUNDS = [
  8, 11, 16, 23, 32, 45, 64, 91, 128, 181, 256, 362, 512, 724, 1024, 1448, 2048, 2896, 4096, 5793, 8192, 11585, 16384, 23170, 32768, 46341,
  65536, 92682, 131072, 185364, 262144,
] as const;
export const LATENCY_BINS = LATENCY_BIN_LOWER_BOUNDS.length + 1;

/** The histogram bin of a latency: the mirror of svc_latency_bin (how many lower bounds it reaches). */
export function latencyBin(ms: number): number {
  let bin = 0;
  while (bin < LATENCY_BIN_LOWER_BOUNDS.length && ms >= LATENCY_BIN_LOWER_BOUNDS[bin]) bin++;
  return bin;
}

/** The range of a bin, [lower, upper) ms; the last bin has no upper bound (null). */
export function binRange(bin: number): { lower: number; upper: number | null } {
  return {
    lower: bin === 0 ? 0 : LATENCY_BIN_LOWER_BOUNDS[bin - 1],
    upper: bin < LATENCY_BIN_LOWER_BOUNDS.length ? LATENCY_BIN_LOWER_BOUNDS[bin] : null,
  };
}

/**
 * The q-quantile (0 < q ≤ 1) of a latency histogram (counts per bin), in whole ms: within the bin that holds the
 * answer of rank ⌈q·n⌉, interpolated linearly by rank and kept inside the bin (the open last bin answers its lower
 * bound). Null for an empty histogram.
 */
export function histogramQuantile(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let below = 0;
  for (let bin = 0; bin < counts.length; bin++) {
    const n = counts[bin];
    if (n > 0 && below + n >= rank) {
      const { lower, upper } = binRange(bin);
      if (upper === null) return lower;
      const at = lower + ((upper - lower) * (rank - below)) / n;
      return Math.min(Math.max(Math.floor(at), lower), upper - 1);
    }
    below += n;
  }
  return null;
}

/** What a window's buckets add up to. */
export type WindowSums = {
  forwards: number;
  /** Distinct sources measured in the window's hours. */
  sources: number;
  answers: number;
  disputed: number;
  latencyMsSum: bigint;
  completionTokens: bigint;
  /** Answers per latency bin. */
  histogram: number[];
};

export function emptySums(): WindowSums {
  return { forwards: 0, sources: 0, answers: 0, disputed: 0, latencyMsSum: 0n, completionTokens: 0n, histogram: [] };
}

function ratio(n: number, d: number, decimals: number): number | null {
  if (d <= 0) return null;
  const scale = 10 ** decimals;
  return Math.round((n / d) * scale) / scale;
}

/** The minimum sample a window's figures need. */
export type MinSample = { requests: number; sources: number };

/** A window's published figures: null (and not sufficient) below the minimum sample of forwards or of sources. */
export function windowFigures(sums: WindowSums, min: MinSample): MeasuredWindowView {
  const sufficient = sums.forwards >= min.requests && sums.sources >= min.sources;
  const counts = { requests: sums.forwards, sources: sums.sources, sufficient };
  if (!sufficient) {
    return { ...counts, success_rate: null, dispute_rate: null, latency_ms: null, throughput_tps: null };
  }
  const p50 = histogramQuantile(sums.histogram, 0.5);
  const p95 = histogramQuantile(sums.histogram, 0.95);
  const latencySeconds = Number(sums.latencyMsSum) / 1000;
  return {
    ...counts,
    success_rate: Math.min(1, ratio(sums.answers, sums.forwards, 4)!),
    dispute_rate: ratio(sums.disputed, sums.answers, 4),
    latency_ms: p50 === null || p95 === null ? null : { p50, p95 },
    throughput_tps: latencySeconds > 0 ? ratio(Number(sums.completionTokens), latencySeconds, 1) : null,
  };
}
