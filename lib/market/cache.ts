/**
 * A tiny in-process cache for the public market views: each answer is computed by one aggregate
 * query and shared for a few seconds, so a busy market page costs the database a query per view
 * per few seconds instead of one per request. Concurrent misses share one in-flight query.
 */
import "server-only";


type Entry = { expiresAt: number; value: Promise<unknown> };

const MAX_ENTRIES = 1000;
const entries = new Map<string, Entry>();

export async function cached<T>(key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
  const now = Date.now();
  const hit = entries.get(key);
  if (hit && hit.expiresAt > now) return hit.value as Promise<T>;
  if (entries.size >= MAX_ENTRIES) {
    for (const [k, e] of entries) if (e.expiresAt <= now) entries.delete(k);
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  }
  const value = load();
  entries.set(key, { expiresAt: now + ttlMs, value });
  value.catch(() => {
    if (entries.get(key)?.value === value) entries.delete(key);
  });
  return value;
}

/** Forgets every cached market view (tests, and after changes a caller must see at once). */
export function clearMarketCache(): void {
  entries.clear();
}
