import { describe, expect, it } from "vitest";
import { binRange, emptySums, histogramQuantile, LATENCY_BINS, latencyBin, windowFigures } from "@/lib/market/quality/figures";

function histogramOf(latencies: number[]): number[] {
  const h = new Array<number>(LATENCY_BINS).fill(0);
  for (const ms of latencies) h[latencyBin(ms)]++;
  return h;
}

describe("percentiles read back from the latency histogram", () => {
  it("fall in the bin of the true percentile, whatever the spread", () => {
    const latencies = [3, 9, 40, 120, 130, 300, 301, 302, 520, 700, 2_000, 9_000, 300_000];
    const sorted = [...latencies].sort((a, b) => a - b);
    for (const q of [0.01, 0.25, 0.5, 0.75, 0.95, 1]) {
      const truth = sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1];
      const read = histogramQuantile(histogramOf(latencies), q)!;
      expect(latencyBin(read), `q=${q}`).toBe(latencyBin(truth));
    }
  });

  it("interpolate inside a bin by rank and never leave it; the open last bin answers its lower bound", () => {
    const h = histogramOf([600, 600, 600, 600]);
    const { lower, upper } = binRange(latencyBin(600));
    expect([lower, upper]).toEqual([512, 724]);
    expect(histogramQuantile(h, 0.25)).toBe(512 + Math.floor((724 - 512) / 4));
    expect(histogramQuantile(h, 1)).toBe(723);
    expect(histogramQuantile(histogramOf([1_000_000]), 0.5)).toBe(262_144);
    expect(histogramQuantile([], 0.5)).toBeNull();
    expect(histogramQuantile(new Array(LATENCY_BINS).fill(0), 0.5)).toBeNull();
  });
});

describe("a window's figures", () => {
  it("are null below the minimum sample, and rounded ratios at or above it", () => {
    const sums = {
      ...emptySums(),
      forwards: 9,
      sources: 5,
      answers: 9,
      latencyMsSum: 900n,
      completionTokens: 90n,
      histogram: histogramOf(Array(9).fill(100)),
    };
    const min = { requests: 10, sources: 5 };
    expect(windowFigures(sums, min)).toEqual({
      requests: 9,
      sources: 5,
      sufficient: false,
      success_rate: null,
      dispute_rate: null,
      latency_ms: null,
      throughput_tps: null,
    });
    const enough = { ...sums, forwards: 12, answers: 9, disputed: 1 };
    expect(windowFigures(enough, min)).toMatchObject({
      requests: 12,
      sources: 5,
      sufficient: true,
      success_rate: 0.75,
      dispute_rate: 0.1111,
      throughput_tps: 100,
    });
    // Enough forwards from too few sources (buyer accounts; the probes as one) is not a figure either.
    expect(windowFigures({ ...enough, sources: 4 }, min)).toMatchObject({ requests: 12, sources: 4, sufficient: false, latency_ms: null });
  });

  it("say nothing of latency, disputes or throughput when no forward was answered", () => {
    expect(windowFigures({ ...emptySums(), forwards: 10, sources: 5 }, { requests: 10, sources: 5 })).toEqual({
      requests: 10,
      sources: 5,
      sufficient: true,
      success_rate: 0,
      dispute_rate: null,
      latency_ms: null,
      throughput_tps: null,
    });
  });
});
