import "server-only";
import { db } from "@/lib/db";
import { decodeCursor, encodeCursor, PAGE_DEFAULT } from "@/lib/pagination";
import { formatMicros } from "@/lib/money";
import type { LedgerItem, LedgerPage } from "@/lib/ledger/schemas";

const CURSOR = /^l(\d{1,19})$/;

/** One page of an account's own ledger lines, newest first. The cursor is opaque to clients. */
export async function listAccountLedger(ownerId: string, page: { cursor?: string; limit?: number } = {}): Promise<LedgerPage> {
  const limit = page.limit ?? PAGE_DEFAULT;
  const before = page.cursor === undefined ? null : BigInt(decodeCursor(page.cursor, CURSOR)[1]);
  const rows = await db.$queryRaw<
    {
      line_id: bigint;
      entry_id: string;
      kind: LedgerItem["kind"];
      ledger_kind: string;
      amount_micros: bigint;
      created_at: Date;
      tx_hash: string | null;
    }[]
  >`
    SELECT jl.id AS line_id, je.id::text AS entry_id, je.kind::text AS kind, la.kind::text AS ledger_kind,
           jl.amount_micros, je.created_at, COALESCE(je.tx_hash, w.tx_hash, p.tx_hash) AS tx_hash
    FROM ledger_accounts la
    JOIN journal_lines jl ON jl.ledger_account_id = la.id
    JOIN journal_entries je ON je.id = jl.entry_id
    LEFT JOIN withdrawals w ON w.id = je.withdrawal_id
    LEFT JOIN payments p ON p.id = je.payment_id
    WHERE la.owner_id = ${ownerId}::uuid AND la.kind IN ('buyer', 'supplier')
      AND (${before}::bigint IS NULL OR jl.id < ${before}::bigint)
    ORDER BY jl.id DESC
    LIMIT ${limit + 1}`;

  const items = rows.slice(0, limit).map((r) => ({
    id: r.entry_id,
    kind: r.kind,
    ledger: r.ledger_kind === "buyer" ? ("balance" as const) : ("earnings" as const),
    amount: formatMicros(BigInt(r.amount_micros)),
    created_at: r.created_at.toISOString(),
    transaction: r.tx_hash,
  }));
  const last = rows[limit - 1];
  return { object: "list", data: items, next_cursor: rows.length > limit && last ? encodeCursor(`l${last.line_id}`) : null };
}
