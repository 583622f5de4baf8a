/**
 * Seeded randomness for the tests that generate their inputs (the fuzz run, the money rules): mulberry32, small,
 * fast, and the same sequence for the same seed everywhere, so a printed seed replays a run exactly.
 */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const chance = (p: number) => next() < p;
  /** A bigint in [0, max]: log-uniform (every magnitude as likely), or, a quarter of the time, one of the edges. */
  const big = (max: bigint, edges: readonly bigint[] = []): bigint => {
    const inRange = [0n, 1n, 2n, max - 1n, max, ...edges].filter((e) => e >= 0n && e <= max);
    if (chance(0.25)) return pick(inRange);
    const bits = int(1, max.toString(2).length);
    let v = 0n;
    for (let b = 0; b < bits; b += 30) v = (v << 30n) | BigInt(int(0, 2 ** 30 - 1));
    return (v % 2n ** BigInt(bits)) % (max + 1n);
  };
  return { next, int, pick, chance, big };
}

export type Rng = ReturnType<typeof prng>;
