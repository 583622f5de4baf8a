/**
 * The public market views and the catalog, each computed by one query and shared for a few seconds (lib/cache.ts
 * `load`): a busy market costs the database a query per view per few seconds instead of one per request, concurrent
 * misses share one in-flight query, and under steady traffic the next value is loaded ahead of the current one's
 * expiry, so neither the catalog read on the completion path nor a busy market page stalls every few seconds on the
 * query. No value is served more than its TTL after its load began.
 */
import "server-only";
import { processCache } from "@/lib/cache";

/** Keys come partly from requests (a book or a history per model): the bound keeps a flood of them from growing it. */
const MAX_ENTRIES = 1000;
const views = processCache<Promise<unknown>>("market-views", MAX_ENTRIES);

export function cached<T>(key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
  return views.load(key, ttlMs, load);
}

/** Forgets every cached market view (tests, and after changes a caller must see at once). */
export function clearMarketCache(): void {
  views.clear();
}
