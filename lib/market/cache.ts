/**
 * A tiny in-process cache for the public market views and the catalog: each answer is computed by one query and
 * shared for a few seconds, so a busy market costs the database a query per view per few seconds instead of one per
 * request. Concurrent misses share one in-flight query.
 *
 * Under steady traffic no request waits for a refresh: a hit in the last quarter of its entry's life starts the next
 * load in the background (one at a time) and still answers the current value, and the new value replaces it when
 * it arrives, fresh from when its load started. So a value is never served more than the TTL after its load began,
 * as before, but the catalog read on the completion path and a busy market page no longer stall every few seconds
 * on the query. A failed refresh leaves the current value to expire as it would have.
 */
import "server-only";

type Entry = { expiresAt: number; value: Promise<unknown>; settled: boolean; refreshing: boolean };

const MAX_ENTRIES = 1000;
/** The share of the TTL, at the end of an entry's life, in which a hit starts the next load. */
const REFRESH_AHEAD = 0.25;
const entries = new Map<string, Entry>();

export function cached<T>(key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
  const now = Date.now();
  const hit = entries.get(key);
  if (hit && hit.expiresAt > now) {
    if (hit.settled && !hit.refreshing && hit.expiresAt - now <= ttlMs * REFRESH_AHEAD) refresh(key, hit, ttlMs, load, now);
    return hit.value as Promise<T>;
  }
  if (entries.size >= MAX_ENTRIES) {
    for (const [k, e] of entries) if (e.expiresAt <= now) entries.delete(k);
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  }
  const value = load();
  const entry: Entry = { expiresAt: now + ttlMs, value, settled: false, refreshing: false };
  entries.set(key, entry);
  value.then(
    () => {
      entry.settled = true;
    },
    () => {
      if (entries.get(key) === entry) entries.delete(key);
    },
  );
  return value;
}

/** Loads the next value of `current` in the background; it replaces `current` only if nothing else has since. */
function refresh<T>(key: string, current: Entry, ttlMs: number, load: () => Promise<T>, startedAt: number): void {
  current.refreshing = true;
  const value = load();
  value.then(
    () => {
      if (entries.get(key) === current) entries.set(key, { expiresAt: startedAt + ttlMs, value, settled: true, refreshing: false });
    },
    () => {
      current.refreshing = false;
    },
  );
}

/** Forgets every cached market view (tests, and after changes a caller must see at once). */
export function clearMarketCache(): void {
  entries.clear();
}
