import "server-only";
import { env } from "@/lib/env";
import { processState } from "@/lib/process-state";
import { tooManyStreams } from "@/lib/router/refusals";

/**
 * Concurrent streams per API key and per account, counted in this process (lib/process-state.ts: the front door and
 * Next's bundle share one count). A stream holds a connection, an upstream call and buffers for as long as it lasts, so
 * the number a buyer can open is bounded apart from the per-minute rate limits. Per instance: behind N instances a key
 * may hold N times as many.
 */
type Slots = { byKey: Map<string, number>; byAccount: Map<string, number> };
const slots = processState<Slots>("stream-slots", () => ({ byKey: new Map(), byAccount: new Map() }));

/** Takes a slot for a new stream, or throws 429 (rate_limited); the returned function gives it back (once). */
export function takeStreamSlot(key: { apiKeyId: string; accountId: string }): () => void {
  const byKey = slots.byKey.get(key.apiKeyId) ?? 0;
  if (byKey >= env.STREAMS_PER_KEY) throw tooManyStreams("key", env.STREAMS_PER_KEY);
  const byAccount = slots.byAccount.get(key.accountId) ?? 0;
  if (byAccount >= env.STREAMS_PER_ACCOUNT) throw tooManyStreams("account", env.STREAMS_PER_ACCOUNT);
  slots.byKey.set(key.apiKeyId, byKey + 1);
  slots.byAccount.set(key.accountId, byAccount + 1);
  let given = false;
  return () => {
    if (given) return;
    given = true;
    decrement(slots.byKey, key.apiKeyId);
    decrement(slots.byAccount, key.accountId);
  };
}

/** Streams open in this process (a gauge for /metrics and the tests). */
export function openStreams(): number {
  let n = 0;
  for (const count of slots.byAccount.values()) n += count;
  return n;
}

function decrement(map: Map<string, number>, id: string): void {
  const n = (map.get(id) ?? 1) - 1;
  if (n <= 0) map.delete(id);
  else map.set(id, n);
}
