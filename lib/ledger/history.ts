import "server-only";
import { db, Prisma } from "@/lib/db/client";
import { decodeCursor, encodeCursor, PAGE_DEFAULT } from "@/lib/pagination";
import { formatMicros } from "@/lib/money";
import { givenIdOf } from "@/lib/wire";
import type { LedgerFilter, LedgerItem, LedgerPage } from "@/lib/ledger/schemas";

/**
 * An account's own history: its journal lines on its buying balance and its earnings, newest first, each with the
 * balance right after it. That balance is read from the ledger in the same statement as the lines: the materialized
 * balance (which equals the sum of the account's lines, an invariant the suite checks) less the lines newer than the
 * one shown, so it is exact, counts lines a filter hides, and the newest line's equals the balance the dashboard shows.
 *
 * With `group: "day"`, clears and probes of one UTC day are one item per offer (earnings) or per model (buying):
 * `count` lines, `amount` their sum, `created_at` and `balance_after` those of the newest. Money in and out stays one
 * item per line. A group is complete on the page that shows it (the cursor is the newest line of the last group).
 */

const CURSOR = /^l(\d{1,19})$/;

/** A journal line as the history reads it (amounts in micro-USDC). */
export type LedgerRow = {
  line_id: bigint;
  entry_id: string;
  kind: LedgerItem["kind"];
  ledger_kind: "buyer" | "supplier";
  amount_micros: bigint;
  created_at: Date;
  tx_hash: string | null;
  model_id: string | null;
  offer_id: string | null;
  generation_id: string | null;
  /** The generation answered POST /v1/responses: its id as the buyer was given it is resp_… (givenIdOf). */
  responses_api: boolean | null;
  balance_after: bigint;
  count: bigint;
};

type ListOptions = LedgerFilter & { cursor?: string; limit?: number; group?: "none" | "day" };

/** One page of an account's own ledger lines, newest first. The cursor is opaque to clients. */
export async function listAccountLedger(ownerId: string, options: ListOptions = {}): Promise<LedgerPage> {
  const limit = options.limit ?? PAGE_DEFAULT;
  const before = options.cursor === undefined ? null : BigInt(decodeCursor(options.cursor, CURSOR)[1]);
  const rows = await readLedgerRows(ownerId, options, { before, limit: limit + 1, group: options.group === "day" });
  const last = rows[limit - 1];
  return {
    object: "list",
    data: rows.slice(0, limit).map(toItem),
    next_cursor: rows.length > limit && last ? encodeCursor(`l${last.line_id}`) : null,
  };
}

export function toItem(r: LedgerRow): LedgerItem {
  return {
    id: r.entry_id,
    kind: r.kind,
    ledger: r.ledger_kind === "buyer" ? "balance" : "earnings",
    amount: formatMicros(BigInt(r.amount_micros)),
    created_at: r.created_at.toISOString(),
    transaction: r.tx_hash,
    balance_after: formatMicros(BigInt(r.balance_after)),
    model: r.model_id,
    offer: r.ledger_kind === "supplier" ? r.offer_id : null,
    generation_id:
      r.ledger_kind === "buyer" && Number(r.count) === 1 && r.generation_id !== null
        ? givenIdOf(r.generation_id, r.responses_api === true)
        : null,
    count: Number(r.count),
  };
}

/** The lines (or day groups) of the filter with line id below `before`, newest first, at most `limit`. */
export async function readLedgerRows(
  ownerId: string,
  filter: LedgerFilter,
  page: { before: bigint | null; limit: number; group: boolean },
): Promise<LedgerRow[]> {
  const lines = Prisma.sql`
    SELECT jl.id AS line_id, jl.ledger_account_id, je.id::text AS entry_id, je.kind::text AS kind, la.kind::text AS ledger_kind,
           jl.amount_micros, je.created_at, COALESCE(je.tx_hash, w.tx_hash, p.tx_hash) AS tx_hash,
           COALESCE(c.model_id, pr.model_id) AS model_id, COALESCE(c.offer_id, pr.offer_id)::text AS offer_id, c.completion_id AS generation_id,
           (SELECT gc.responses_api FROM completions gc WHERE gc.id = c.completion_id) AS responses_api
    ${filteredLines(
      ownerId,
      filter,
      Prisma.sql`
      LEFT JOIN withdrawals w ON w.id = je.withdrawal_id
      LEFT JOIN payments p ON p.id = je.payment_id`,
    )}`;

  const shown = page.group
    ? Prisma.sql`
      keyed AS (
        SELECT l.*, CASE WHEN l.kind IN ('clear', 'probe')
                    THEN concat_ws(':', l.kind, l.ledger_kind, to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
                                   CASE WHEN l.ledger_kind = 'supplier' THEN l.offer_id ELSE l.model_id END)
                    ELSE 'l' || l.line_id END AS group_key
        FROM lines l
      ),
      groups AS (
        SELECT max(line_id) AS line_id, sum(amount_micros)::bigint AS amount_micros, count(*) AS count
        FROM keyed GROUP BY group_key
        HAVING ${page.before}::bigint IS NULL OR max(line_id) < ${page.before}::bigint
        ORDER BY max(line_id) DESC LIMIT ${page.limit}
      ),
      shown AS (
        SELECT k.line_id, k.ledger_account_id, k.entry_id, k.kind, k.ledger_kind, g.amount_micros, k.created_at,
               k.tx_hash, k.model_id, k.offer_id, k.generation_id, k.responses_api, g.count
        FROM groups g JOIN keyed k ON k.line_id = g.line_id
      )`
    : Prisma.sql`
      shown AS (
        SELECT l.*, 1::bigint AS count FROM lines l
        WHERE ${page.before}::bigint IS NULL OR l.line_id < ${page.before}::bigint
        ORDER BY l.line_id DESC LIMIT ${page.limit}
      )`;

  // The balance after a shown line: the materialized balance less every newer line of that ledger account, summed
  // once over the account's lines from the oldest line shown (not once per line).
  return db.$queryRaw<LedgerRow[]>`
    WITH lines AS (${lines}),
    ${shown},
    since AS (SELECT ledger_account_id, min(line_id) AS lo FROM shown GROUP BY ledger_account_id),
    after AS (
      SELECT jl.id, la.balance_micros - COALESCE(sum(jl.amount_micros) OVER (
               PARTITION BY jl.ledger_account_id ORDER BY jl.id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS balance_after
      FROM since s
      JOIN ledger_accounts la ON la.id = s.ledger_account_id
      JOIN journal_lines jl ON jl.ledger_account_id = s.ledger_account_id AND jl.id >= s.lo
    )
    SELECT s.line_id, s.entry_id, s.kind, s.ledger_kind, s.amount_micros, s.created_at, s.tx_hash, s.model_id, s.offer_id,
           s.generation_id, s.responses_api, s.count, a.balance_after::bigint AS balance_after
    FROM shown s JOIN after a ON a.id = s.line_id
    ORDER BY s.line_id DESC`;
}

/** The lines the filter holds, counted no further than `cap`. */
export async function countLedgerLines(ownerId: string, filter: LedgerFilter, cap: number): Promise<number> {
  const [row] = await db.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM (SELECT 1 ${filteredLines(ownerId, filter)} LIMIT ${cap}) capped`;
  return Number(row?.n ?? 0);
}

/**
 * FROM … WHERE of an account's journal lines under a filter, shared by the history and its count: the lines of its
 * buying balance and earnings with their entry, and the clear or probe each came from (what `offer` and `model`
 * filter on); `joins` adds what only the caller's columns need.
 */
function filteredLines(ownerId: string, filter: LedgerFilter, joins: Prisma.Sql = Prisma.empty): Prisma.Sql {
  return Prisma.sql`
    FROM ledger_accounts la
    JOIN journal_lines jl ON jl.ledger_account_id = la.id
    JOIN journal_entries je ON je.id = jl.entry_id
    ${joins}
    LEFT JOIN clears c ON c.id = je.clear_id
    LEFT JOIN probe_runs pr ON pr.id = je.probe_run_id
    WHERE la.owner_id = ${ownerId}::uuid AND la.kind IN ('buyer', 'supplier') ${filterSql(filter)}`;
}

function filterSql(filter: LedgerFilter): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  switch (filter.type) {
    case "topup":
      parts.push(Prisma.sql`je.kind = 'topup'`);
      break;
    case "withdrawal":
      parts.push(Prisma.sql`je.kind IN ('withdrawal', 'withdrawal_reversal')`);
      break;
    case "usage":
      parts.push(Prisma.sql`je.kind = 'clear' AND la.kind = 'buyer'`);
      break;
    case "earnings":
      parts.push(Prisma.sql`je.kind IN ('clear', 'probe') AND la.kind = 'supplier'`);
      break;
  }
  if (filter.from) parts.push(Prisma.sql`je.created_at >= ${dayStart(filter.from)}::timestamptz`);
  if (filter.to) parts.push(Prisma.sql`je.created_at < ${dayStart(filter.to, 1)}::timestamptz`);
  if (filter.offer) parts.push(Prisma.sql`COALESCE(c.offer_id, pr.offer_id) = ${filter.offer}::uuid`);
  if (filter.model) parts.push(Prisma.sql`COALESCE(c.model_id, pr.model_id) = ${filter.model}`);
  return parts.length === 0 ? Prisma.empty : Prisma.sql`AND ${Prisma.join(parts, " AND ")}`;
}

/** 00:00 UTC of a YYYY-MM-DD day, `plus` days later. */
function dayStart(day: string, plus = 0): Date {
  const d = new Date(`${day}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + plus);
  return d;
}
