/**
 * One in-process cache, for every value a process keeps to save a query or a computation: the market views (a load
 * shared by every request for a few seconds), the completion path's API keys, the decrypted upstream keys. The
 * contract, the same for each:
 *
 * - A value is answered until `ttlMs` after it was stored (a loaded one: after its load began), never later; stored
 *   without a TTL, until it is evicted or deleted.
 * - At most `maxEntries`: storing a new key into a full cache drops an expired entry if there is one (all of them
 *   when it has to look), else the one written longest ago (a write moves its key to the newest place). A request
 *   whose input names the key can fill a cache, never grow it.
 * - A hit costs one Map lookup and a comparison (none for a value without a TTL), and allocates nothing. A store into
 *   a full cache looks at its oldest entry; it walks the cache for expired ones only when that one is live and
 *   another can have expired since the last walk (the earliest expiry stored is kept). In a cache whose values share
 *   one TTL (the API keys) or have none (the upstream keys) the oldest entry is the first to expire, so a walk comes
 *   only after a deleted entry left the earliest expiry behind, once.
 * - `load` (the style of the market views): concurrent misses share one in-flight load, and a failed load is not
 *   kept. A hit in the last quarter of its entry's life starts the next load in the background (one at a time) and
 *   still answers the current value; the next value replaces it when it arrives, fresh from when its load began,
 *   unless the key was written or the cache cleared meanwhile. So no request waits on a refresh under steady traffic,
 *   and a failed refresh leaves the current value to expire as it would have.
 * - One per process (lib/process-state.ts): `processCache(name)` from Next's server bundle and from the front door's
 *   host is the same cache, so a value loaded, or a key dropped, by either is so for both.
 *
 * A cache is never the authority on what must be seen at once: a caller whose value can turn wrong says what checks
 * the truth (the key cache: the reservation statement) and deletes what that refuses.
 */
import "server-only";
import { processState } from "@/lib/process-state";

/** The share of the TTL, at the end of a loaded entry's life, in which a hit starts the next load. */
const REFRESH_AHEAD = 0.25;

type Entry<V> = {
  value: V;
  /** Epoch ms after which the value is no longer answered; Infinity without a TTL. */
  expiresAt: number;
  /** False while a loaded value's promise is pending (a refresh starts only from a settled value). */
  settled: boolean;
  /** A background load of the next value is in flight. */
  refreshing: boolean;
};

export class Cache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /** No entry expires before this (a lower bound): until then, a full cache has nothing expired to drop. */
  private earliestExpiry = Infinity;

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The live value under `key`, or undefined. */
  get(key: string, now?: number): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined || (entry.expiresAt !== Infinity && entry.expiresAt <= (now ?? Date.now()))) return undefined;
    return entry.value;
  }

  /** Stores `value` under `key` for `ttlMs` from `now` (without a TTL, until evicted). */
  set(key: string, value: V, ttlMs = Infinity, now?: number): void {
    const expiresAt = ttlMs === Infinity ? Infinity : (now ?? Date.now()) + ttlMs;
    this.write(key, { value, expiresAt, settled: true, refreshing: false }, now);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.earliestExpiry = Infinity;
  }

  /**
   * The value `load` gives for `key`, shared for `ttlMs` by every caller, refreshed ahead of its expiry (see the
   * header).
   */
  load<T>(this: Cache<Promise<unknown>>, key: string, ttlMs: number, load: () => Promise<T>, now = Date.now()): Promise<T> {
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.expiresAt > now) {
      if (hit.settled && !hit.refreshing && hit.expiresAt - now <= ttlMs * REFRESH_AHEAD) this.refresh(key, hit, ttlMs, load, now);
      return hit.value as Promise<T>;
    }
    const value = load();
    const entry: Entry<Promise<unknown>> = { value, expiresAt: now + ttlMs, settled: false, refreshing: false };
    this.write(key, entry, now);
    value.then(
      () => {
        entry.settled = true;
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return value;
  }

  /** Loads the next value of `current` in the background; it replaces `current` only if nothing else has since. */
  private refresh(
    this: Cache<Promise<unknown>>,
    key: string,
    current: Entry<Promise<unknown>>,
    ttlMs: number,
    load: () => Promise<unknown>,
    startedAt: number,
  ) {
    current.refreshing = true;
    const value = load();
    value.then(
      () => {
        if (this.entries.get(key) === current) {
          this.write(key, { value, expiresAt: startedAt + ttlMs, settled: true, refreshing: false }, startedAt);
        }
      },
      () => {
        current.refreshing = false;
      },
    );
  }

  private write(key: string, entry: Entry<V>, now: number | undefined): void {
    if (!this.entries.delete(key) && this.entries.size >= this.maxEntries) this.evict(now);
    this.entries.set(key, entry);
    if (entry.expiresAt < this.earliestExpiry) this.earliestExpiry = entry.expiresAt;
  }

  /**
   * Makes room for one entry: an expired one if any, else the one written longest ago. That one is checked first: in
   * a cache whose values share one TTL it is also the first to expire, so only caches of several TTLs ever walk.
   */
  private evict(now = Date.now()): void {
    const [oldestKey, oldest] = this.entries.entries().next().value!;
    if (oldest.expiresAt > now && this.earliestExpiry <= now) {
      let earliest = Infinity;
      for (const [key, entry] of this.entries) {
        if (entry.expiresAt <= now) this.entries.delete(key);
        else if (entry.expiresAt < earliest) earliest = entry.expiresAt;
      }
      this.earliestExpiry = earliest;
    }
    if (this.entries.size >= this.maxEntries) this.entries.delete(oldestKey);
  }
}

/** The process-wide cache called `name`, holding at most `maxEntries` values. */
export function processCache<V>(name: string, maxEntries: number): Cache<V> {
  return processState(`cache.${name}`, () => new Cache<V>(maxEntries));
}
