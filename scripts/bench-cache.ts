/**
 * `npx tsx --import ./server/server-modules.mjs scripts/bench-cache.ts`: what lib/cache.ts costs per operation on the
 * completion path, beside a bare Map doing the same work the way the caches did before the helper (a Map of
 * `{ key, at }` and an age check, a Map of strings, the first key dropped when full). Figures are printed, never
 * asserted: nanoseconds per operation, the median of several rounds, each case in a loop of its own.
 *
 * - a hit: the API-key cache (with a TTL) and the decrypted upstream keys (without), once per completion each;
 * - a loaded hit: the market views (the catalog read on every completion);
 * - a store of a new key into a full cache of live values: the API-key cache's miss once it holds its 10,000 keys;
 * - a store into a full cache whose oldest value is live and all others have expired: the one walk that drops them.
 *
 * Options: --rounds N (default 7) --ops N per round (default 1000000)
 */
import { parseArgs } from "node:util";
import { Cache } from "../lib/cache";

const { values: opts } = parseArgs({ options: { rounds: { type: "string", default: "7" }, ops: { type: "string", default: "1000000" } } });
const ROUNDS = Number(opts.rounds);
const OPS = Number(opts.ops);
const KEYS = 10_000;
const TTL_MS = 60_000;
const now = Date.now();
/** Keys as the API-key cache holds them: 64 hex digits. */
const hashes = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i.toString(16).padStart(63, "0")}`);
const names = hashes("a", KEYS);

/** Median ns per operation: `loop` runs `ops` operations and answers how many it counted (kept, so none is elided). */
function median(loop: (round: number) => number, ops: number): number {
  const perOp: number[] = [];
  let sink = 0;
  for (let round = -1; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    sink += loop(round);
    if (round >= 0) perOp.push(Number(process.hrtime.bigint() - start) / ops);
  }
  if (sink === -1) console.log(sink);
  return perOp.sort((a, b) => a - b)[Math.floor(perOp.length / 2)];
}

function row(label: string, bare: number | null, helper: number) {
  const fmt = (n: number | null) => (n === null ? "—" : n.toFixed(1)).padStart(10);
  console.log(`${label.padEnd(52)} ${fmt(bare)} ns ${fmt(helper)} ns`);
}

console.log(`${"".padEnd(52)} ${"bare Map".padStart(13)} ${"lib/cache".padStart(13)}`);

{
  const bare = new Map(names.map((n) => [n, { key: { id: n }, at: now }]));
  const cache = new Cache<{ id: string }>(KEYS);
  for (const n of names) cache.set(n, { id: n }, TTL_MS, now);
  row(
    "hit, with a TTL (API keys)",
    median(() => {
      let found = 0;
      for (let i = 0; i < OPS; i++) {
        const hit = bare.get(names[i % KEYS]);
        if (hit && now - hit.at < TTL_MS) found++;
      }
      return found;
    }, OPS),
    median(() => {
      let found = 0;
      for (let i = 0; i < OPS; i++) if (cache.get(names[i % KEYS], now)) found++;
      return found;
    }, OPS),
  );
}

{
  const bare = new Map(names.slice(0, 1000).map((n) => [n, n]));
  const cache = new Cache<string>(1000);
  for (const n of names.slice(0, 1000)) cache.set(n, n);
  row(
    "hit, without a TTL (upstream keys)",
    median(() => {
      let found = 0;
      for (let i = 0; i < OPS; i++) if (bare.get(names[i % 1000]) !== undefined) found++;
      return found;
    }, OPS),
    median(() => {
      let found = 0;
      for (let i = 0; i < OPS; i++) if (cache.get(names[i % 1000]) !== undefined) found++;
      return found;
    }, OPS),
  );
}

{
  const bare = new Map<string, { value: Promise<unknown>; expiresAt: number }>();
  const cache = new Cache<Promise<unknown>>(1000);
  for (const n of names.slice(0, 100)) {
    const value = Promise.resolve(n);
    bare.set(n, { value, expiresAt: now + TTL_MS });
    void cache.load(n, TTL_MS, () => value, now);
  }
  const never = () => Promise.reject(new Error("a hit must not load"));
  row(
    "loaded hit (market views)",
    median(() => {
      let found = 0;
      for (let i = 0; i < OPS; i++) {
        const hit = bare.get(names[i % 100]);
        if (hit && hit.expiresAt > now) found++;
      }
      return found;
    }, OPS),
    median(() => {
      let last: Promise<unknown> | undefined;
      for (let i = 0; i < OPS; i++) last = cache.load(names[i % 100], TTL_MS, never, now);
      return last ? OPS : 0;
    }, OPS),
  );
}

{
  // Every store is of a key the cache does not hold, so each one drops the oldest live entry.
  const STORES = 100_000;
  const fresh = Array.from({ length: ROUNDS + 1 }, (_, round) => hashes(`b${round}`, STORES));
  const bare = new Map(names.map((n) => [n, { key: { id: n }, at: now }]));
  const cache = new Cache<{ id: string }>(KEYS);
  for (const n of names) cache.set(n, { id: n }, TTL_MS, now);
  row(
    "store into a full cache of live values (key miss)",
    median((round) => {
      const keys = fresh[round + 1];
      for (let i = 0; i < STORES; i++) {
        if (bare.size >= KEYS) bare.delete(bare.keys().next().value!);
        bare.set(keys[i], { key: { id: "x" }, at: now });
      }
      return bare.size;
    }, STORES),
    median((round) => {
      const keys = fresh[round + 1];
      for (let i = 0; i < STORES; i++) cache.set(keys[i], { id: "x" }, TTL_MS, now);
      return cache.size;
    }, STORES),
  );
}

{
  const cache = new Cache<number>(KEYS);
  const walks: number[] = [];
  for (let round = -1; round < ROUNDS; round++) {
    // The oldest entry live, every other one expired: the one store that has to walk them (a cache of several TTLs).
    cache.set(names[0], 0, TTL_MS, 0);
    for (let i = 1; i < KEYS; i++) cache.set(names[i], i, 1, 0);
    const start = process.hrtime.bigint();
    cache.set("after", 0, TTL_MS, 10);
    if (round >= 0) walks.push(Number(process.hrtime.bigint() - start));
    cache.clear();
  }
  row(`store that walks ${KEYS.toLocaleString("en")} expired entries`, null, walks.sort((a, b) => a - b)[Math.floor(walks.length / 2)]);
}
