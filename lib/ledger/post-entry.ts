import "server-only";
import { Prisma, type Tx } from "@/lib/db/client";
import { AppError } from "@/lib/errors";

export type JournalEntryKind = "topup" | "clear" | "withdrawal" | "withdrawal_reversal" | "probe" | "probe_funding";

/** A signed amount on one ledger account: positive raises its balance. */
export type LedgerLine = { ledgerAccountId: string; amountMicros: bigint };

export type PostEntryInput = {
  kind: JournalEntryKind;
  paymentId?: string;
  withdrawalId?: string;
  clearId?: string;
  probeRunId?: string;
  txHash?: string;
  lines: LedgerLine[];
};

/**
 * Posts one journal entry inside the caller's transaction.
 *
 * Locks the touched ledger accounts in (kind, id) order (buyer, supplier, platform, external: the order every
 * writer of `ledger_accounts` keeps, the completion clear included, so concurrent postings cannot deadlock).
 * Moves each balance with one conditional UPDATE: a debit that would take a non-external account below its held
 * money matches no row, which throws `insufficient_balance` (roll the caller's transaction back). Then writes the
 * entry and all of its lines in ONE INSERT, as the database's balance trigger requires.
 */
export async function postEntry(tx: Tx, input: PostEntryInput): Promise<{ entryId: string }> {
  assertBalancedLines(input.lines);
  const ids = input.lines.map((l) => l.ledgerAccountId);

  const locked = await tx.$queryRaw<{ id: string }[]>`
    SELECT id::text FROM ledger_accounts
    WHERE id IN (${Prisma.join(ids.map((id) => Prisma.sql`${id}::uuid`))})
    ORDER BY kind, id FOR UPDATE`;
  if (locked.length !== ids.length) {
    const found = new Set(locked.map((r) => r.id));
    throw new Error(`postEntry: unknown ledger account(s) ${ids.filter((id) => !found.has(id)).join(", ")}`);
  }

  const values = Prisma.join(input.lines.map((l) => Prisma.sql`(${l.ledgerAccountId}::uuid, ${l.amountMicros}::bigint)`));
  const moved = await tx.$queryRaw<{ id: string }[]>`
    UPDATE ledger_accounts la SET balance_micros = la.balance_micros + d.amount
    FROM (VALUES ${values}) AS d(id, amount)
    WHERE la.id = d.id AND (la.kind = 'external' OR la.balance_micros + d.amount >= la.held_micros)
    RETURNING la.id::text`;
  if (moved.length !== input.lines.length) {
    throw new AppError("insufficient_balance", "The balance is too low for this movement of money.");
  }

  const rows = await tx.$queryRaw<{ entry_id: string }[]>`
    WITH entry AS (
      INSERT INTO journal_entries (kind, payment_id, withdrawal_id, clear_id, probe_run_id, tx_hash)
      VALUES (${input.kind}::journal_entry_kind, ${input.paymentId ?? null}::uuid, ${input.withdrawalId ?? null}::uuid,
              ${input.clearId ?? null}::uuid, ${input.probeRunId ?? null}::uuid, ${input.txHash ?? null})
      RETURNING id
    )
    INSERT INTO journal_lines (entry_id, ledger_account_id, amount_micros)
    SELECT entry.id, l.id, l.amount FROM entry CROSS JOIN (VALUES ${values}) AS l(id, amount)
    RETURNING entry_id::text`;
  return { entryId: rows[0].entry_id };
}

function assertBalancedLines(lines: LedgerLine[]) {
  if (lines.length < 2) throw new Error("postEntry: an entry needs at least two lines");
  const seen = new Set<string>();
  let sum = 0n;
  for (const line of lines) {
    if (typeof line.amountMicros !== "bigint" || line.amountMicros === 0n) {
      throw new Error("postEntry: every line needs a non-zero bigint amount");
    }
    if (seen.has(line.ledgerAccountId)) throw new Error("postEntry: one line per ledger account");
    seen.add(line.ledgerAccountId);
    sum += line.amountMicros;
  }
  if (sum !== 0n) throw new Error(`postEntry: lines sum to ${sum}, not 0`);
}
