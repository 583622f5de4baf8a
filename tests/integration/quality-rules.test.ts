/**
 * The measurement rules are SQL (prisma/functions/svc_offer_stats_bucket.sql, svc_latency_bin.sql), written by the
 * clear and the failure report; lib/market/quality/figures.ts mirrors them to read the windows and percentiles back.
 * Each pair is compared on seeded random inputs weighted to the edges (every bin bound, bucket boundaries to the
 * millisecond), in one query per rule. SVC_RULES_SEED=<n> replays a run; the seed is printed.
 */
import { describe, expect, it } from "vitest";
import { pgPool } from "@/lib/db/pool";
import { LATENCY_BIN_LOWER_BOUNDS, LATENCY_BINS, latencyBin, SAMPLES_PER_SOURCE_HOUR, statsBucket } from "@/lib/market/quality/figures";
import { prng } from "../helpers/prng";

// eslint-disable-next-line no-restricted-properties -- test knobs, read once here
const knobs = process.env;
const SEED = Number(knobs.SVC_RULES_SEED ?? Date.now() % 2 ** 31);
const CASES = 5_000;
const rng = prng(SEED);
console.log(`quality-rules: seed ${SEED} (replay with SVC_RULES_SEED=${SEED})`);

describe("the measurement rules in SQL and their TypeScript mirrors (lib/market/quality/figures.ts)", () => {
  it("the 5-minute bucket of an instant, to the millisecond around each boundary", async () => {
    const boundary = Date.UTC(2026, 10, 26, 12, 5, 0);
    const instants = [
      ...[-1, 0, 1, 999, 1000, 299_999, 300_000, 300_001].map((d) => boundary + d),
      0,
      Date.UTC(2038, 0, 19, 3, 14, 8),
      ...Array.from({ length: CASES }, () => rng.int(0, Date.UTC(2100, 0, 1))),
    ];
    const { rows } = await pgPool().query<{ b: number }>(
      "SELECT svc_offer_stats_bucket(t) AS b FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n) ORDER BY n",
      [instants.map((ms) => new Date(ms).toISOString())],
    );
    expect(rows.map((r) => r.b)).toEqual(instants.map((ms) => statsBucket(new Date(ms))));
    expect(statsBucket(new Date(boundary - 1)) + 1).toBe(statsBucket(new Date(boundary)));
  });

  it("the latency bin of a latency, at and around every bound, and the bin count", async () => {
    const latencies = [
      0,
      1,
      2_147_483_647,
      ...LATENCY_BIN_LOWER_BOUNDS.flatMap((b) => [b - 1, b, b + 1]),
      ...Array.from({ length: CASES }, () => Number(rng.big(2_147_483_647n))),
    ];
    const { rows } = await pgPool().query<{ bin: number }>(
      "SELECT svc_latency_bin(l) AS bin FROM unnest($1::bigint[]) WITH ORDINALITY AS u(l, n) ORDER BY n",
      [latencies],
    );
    expect(rows.map((r) => r.bin)).toEqual(latencies.map(latencyBin));
    // The clear writes svc_latency_bin(max) + 1 elements: the mirror's bin count.
    const { rows: top } = await pgPool().query<{ bin: number }>("SELECT svc_latency_bin(9223372036854775807) AS bin");
    expect(top[0].bin + 1).toBe(LATENCY_BINS);
  });

  it("the forwards of one buyer account measured per offer and hour", async () => {
    const { rows } = await pgPool().query<{ cap: number }>("SELECT svc_quality_source_cap() AS cap");
    expect(rows[0].cap).toBe(SAMPLES_PER_SOURCE_HOUR);
  });
});
