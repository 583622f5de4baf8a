import "server-only";
import { db } from "@/lib/db/client";
import { log } from "@/lib/log";
import { processState } from "@/lib/process-state";
import type { RefusalList, RefusalsQueryInput } from "@/lib/account/schemas";

/**
 * Requests an API key was refused (402, 429, 503), counted per key so a buyer can see why an agent stopped.
 *
 * What a buyer can make svc write is bounded twice: refusals are tallied in memory per (key, UTC minute, code) and
 * written together, at most one statement in flight per process and one every FLUSH_DELAY_MS at most, whatever the
 * request rate (a flood of 429s is one counter going up); and the table holds one row per key, minute and code, pruned
 * after RETENTION_DAYS. A served request writes nothing here. Counts still in memory when a process dies are lost: they
 * explain, they are not money.
 */

/** The statuses that are a refusal of the buyer's request (the money, the rate, the market), not a fault of it. */
export const REFUSAL_STATUSES = [402, 429, 503] as const;
/** Codes with those statuses that say svc itself cannot serve (its database, a restart): not the key's refusal. */
const NOT_THE_KEYS = new Set(["service_unavailable", "shutting_down"]);
const FLUSH_DELAY_MS = 200;
/** Distinct (key, minute, code) waiting for one write: past it, further new ones are dropped (and logged). */
const MAX_PENDING = 10_000;
const MESSAGE_CHARS = 500;
export const RETENTION_DAYS = 7;
const RECENT_ROWS = 50;

export type Refusal = { apiKeyId: string; accountId: string; status: number; code: string; message: string };
type Tally = Refusal & { minute: number; count: number; lastAt: number };

const tally = processState("api-key-refusals", () => ({
  pending: new Map<string, Tally>(),
  timer: null as NodeJS.Timeout | null,
  flushing: null as Promise<void> | null,
  dropped: 0,
}));

export function isKeyRefusal(status: number, code: string): boolean {
  return (REFUSAL_STATUSES as readonly number[]).includes(status) && !NOT_THE_KEYS.has(code);
}

/** Counts one refusal; written within FLUSH_DELAY_MS. Never throws and never waits: the answer goes out at once. */
export function noteRefusal(refusal: Refusal, now = Date.now()): void {
  const minute = Math.floor(now / 60_000) * 60_000;
  const id = `${refusal.apiKeyId}|${minute}|${refusal.code}`;
  const seen = tally.pending.get(id);
  if (seen) {
    seen.count++;
    seen.lastAt = now;
    seen.message = refusal.message;
  } else if (tally.pending.size >= MAX_PENDING) {
    tally.dropped++;
  } else {
    tally.pending.set(id, { ...refusal, minute, count: 1, lastAt: now });
  }
  schedule();
}

function schedule() {
  if (tally.timer || tally.flushing || tally.pending.size === 0) return;
  tally.timer = setTimeout(() => void flushRefusals(), FLUSH_DELAY_MS);
  tally.timer.unref();
}

/** Writes what this process has counted (one statement); a reader calls it first, so it sees its own process's counts. */
export async function flushRefusals(): Promise<void> {
  if (tally.timer) clearTimeout(tally.timer);
  tally.timer = null;
  while (tally.flushing) await tally.flushing;
  const items = [...tally.pending.values()];
  tally.pending.clear();
  if (tally.dropped > 0) {
    log.warn("refusal tally full: refusals not counted", { dropped: tally.dropped });
    tally.dropped = 0;
  }
  if (items.length === 0) return;
  tally.flushing = writeRefusals(items)
    .catch((error: unknown) => log.warn("refusals not recorded", { count: items.length, error }))
    .finally(() => {
      tally.flushing = null;
      schedule();
    });
  await tally.flushing;
}

/** One upsert for every (key, minute, code): counts add up; the last message is the latest refusal's. */
async function writeRefusals(items: Tally[]): Promise<void> {
  await db.$executeRaw`
    INSERT INTO api_key_refusals (api_key_id, minute, code, account_id, status, count, last_at, last_message)
    SELECT u.api_key_id, u.minute, u.code, k.account_id, u.status, u.count, u.last_at, u.last_message
    FROM unnest(${items.map((i) => i.apiKeyId)}::uuid[], ${items.map((i) => new Date(i.minute).toISOString())}::timestamptz[],
                ${items.map((i) => i.code)}::text[], ${items.map((i) => i.status)}::int[], ${items.map((i) => i.count)}::int[],
                ${items.map((i) => new Date(i.lastAt).toISOString())}::timestamptz[],
                ${items.map((i) => i.message.slice(0, MESSAGE_CHARS))}::text[])
      AS u(api_key_id, minute, code, status, count, last_at, last_message)
    JOIN api_keys k ON k.id = u.api_key_id
    ON CONFLICT (api_key_id, minute, code) DO UPDATE SET
      count = api_key_refusals.count + EXCLUDED.count,
      status = EXCLUDED.status,
      last_message = CASE WHEN EXCLUDED.last_at >= api_key_refusals.last_at THEN EXCLUDED.last_message ELSE api_key_refusals.last_message END,
      last_at = GREATEST(api_key_refusals.last_at, EXCLUDED.last_at)`;
}

/** Drops what is older than RETENTION_DAYS (a background job). */
export async function pruneRefusals(now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - RETENTION_DAYS * 86_400_000);
  return db.$executeRaw`DELETE FROM api_key_refusals WHERE minute < ${before}::timestamptz`;
}

type KeyRef = { id: string; name: string; prefix: string };

/**
 * The account's refusals over the last `hours`: per key, counted by reason; and the latest minutes with any, newest
 * first. `apiKeyId` narrows both to one key (a key reading its own).
 */
export async function listRefusals(accountId: string, query: RefusalsQueryInput & { apiKeyId?: string | null }): Promise<RefusalList> {
  await flushRefusals();
  const since = new Date(Date.now() - query.hours * 3_600_000);
  // Whole minutes: the minute `since` falls in counts, so a count never depends on the second it is read at.
  const fromMinute = new Date(Math.floor(since.getTime() / 60_000) * 60_000);
  const keyId = query.apiKeyId ?? null;
  const [reasons, recent] = await Promise.all([
    db.$queryRaw<{ api_key_id: string; code: string; status: number; count: bigint; last_at: Date; last_message: string }[]>`
      SELECT DISTINCT ON (api_key_id, code) api_key_id::text, code, status,
             SUM(count) OVER (PARTITION BY api_key_id, code) AS count, last_at, last_message
      FROM api_key_refusals
      WHERE account_id = ${accountId}::uuid AND minute >= ${fromMinute}::timestamptz
        AND (${keyId}::uuid IS NULL OR api_key_id = ${keyId}::uuid)
      ORDER BY api_key_id, code, last_at DESC`,
    db.$queryRaw<{ api_key_id: string; minute: Date; code: string; status: number; count: number; last_at: Date; last_message: string }[]>`
      SELECT api_key_id::text, minute, code, status, count, last_at, last_message
      FROM api_key_refusals
      WHERE account_id = ${accountId}::uuid AND minute >= ${fromMinute}::timestamptz
        AND (${keyId}::uuid IS NULL OR api_key_id = ${keyId}::uuid)
      ORDER BY last_at DESC, code
      LIMIT ${RECENT_ROWS}`,
  ]);
  const ids = [...new Set([...reasons, ...recent].map((r) => r.api_key_id))];
  const keys = new Map<string, KeyRef>(
    (await db.apiKey.findMany({ where: { id: { in: ids } }, select: { id: true, name: true, prefix: true } })).map((k) => [k.id, k]),
  );
  const keyOf = (id: string): KeyRef => keys.get(id) ?? { id, name: "(deleted key)", prefix: "" };

  const byKey = new Map<string, RefusalList["by_key"][number]>();
  for (const r of reasons) {
    const entry = byKey.get(r.api_key_id) ?? { key: keyOf(r.api_key_id), total: 0, last_at: r.last_at.toISOString(), reasons: [] };
    const count = Number(r.count);
    entry.total += count;
    if (r.last_at.toISOString() > entry.last_at) entry.last_at = r.last_at.toISOString();
    entry.reasons.push({ status: r.status, code: r.code, count, last_at: r.last_at.toISOString(), last_message: r.last_message });
    byKey.set(r.api_key_id, entry);
  }
  const perKey = [...byKey.values()]
    .map((k) => ({ ...k, reasons: k.reasons.sort((a, b) => b.count - a.count || a.code.localeCompare(b.code)) }))
    .sort((a, b) => b.last_at.localeCompare(a.last_at));
  return {
    object: "refusals",
    since: fromMinute.toISOString(),
    total: perKey.reduce((sum, k) => sum + k.total, 0),
    by_key: perKey,
    recent: recent.map((r) => ({
      minute: r.minute.toISOString(),
      key: keyOf(r.api_key_id),
      status: r.status,
      code: r.code,
      count: r.count,
      last_at: r.last_at.toISOString(),
      last_message: r.last_message,
    })),
  };
}
