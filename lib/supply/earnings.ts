import "server-only";
import { db } from "@/lib/db/client";
import { getBalance } from "@/lib/ledger/accounts";
import { formatMicros } from "@/lib/money";
import type { DailyEarningsList, Earnings } from "@/lib/supply/schemas";

/**
 * A supplier's earnings: `available` to withdraw (the earnings ledger balance, already net of withdrawals in
 * flight), `withdrawn` (sent on chain) and `pending` (debited, transfer not yet confirmed).
 */
export async function getEarnings(accountId: string): Promise<Earnings> {
  const [balance, byStatus] = await Promise.all([
    getBalance("supplier", accountId),
    db.withdrawal.groupBy({ by: ["status"], where: { accountId, status: { in: ["sent", "pending"] } }, _sum: { amountMicros: true } }),
  ]);
  const sum = (status: "sent" | "pending") => byStatus.find((g) => g.status === status)?._sum.amountMicros ?? 0n;
  return {
    available: formatMicros(balance.availableMicros),
    withdrawn: formatMicros(sum("sent")),
    pending: formatMicros(sum("pending")),
  };
}

/**
 * Earnings per UTC day and offer over the last `days` days (today included), oldest first: the supplier's earnings
 * ledger lines of clears and probes, dated as the history dates them (the journal entry), so a day here is the sum of
 * that day's group in GET /v1/account/ledger?group=day. Clears are found through their (offer_id, created_at) index.
 */
export async function listDailyEarnings(accountId: string, days: number, now = new Date()): Promise<DailyEarningsList> {
  const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (days - 1)));
  const rows = await db.$queryRaw<{ day: string; offer_id: string; earned: bigint; requests: bigint }[]>`
    WITH mine AS (SELECT id FROM ledger_accounts WHERE owner_id = ${accountId}::uuid AND kind = 'supplier'),
    earned AS (
      SELECT je.created_at, c.offer_id, jl.amount_micros
      FROM offers o
      JOIN clears c ON c.offer_id = o.id AND c.created_at >= ${since}::timestamptz - interval '1 minute'
      JOIN journal_entries je ON je.clear_id = c.id
      JOIN journal_lines jl ON jl.entry_id = je.id AND jl.ledger_account_id = (SELECT id FROM mine)
      WHERE o.supplier_id = ${accountId}::uuid
      UNION ALL
      SELECT je.created_at, pr.offer_id, jl.amount_micros
      FROM offers o
      JOIN probe_runs pr ON pr.offer_id = o.id AND pr.day >= (${since}::timestamptz AT TIME ZONE 'UTC')::date - 1
      JOIN journal_entries je ON je.probe_run_id = pr.id
      JOIN journal_lines jl ON jl.entry_id = je.id AND jl.ledger_account_id = (SELECT id FROM mine)
      WHERE o.supplier_id = ${accountId}::uuid
    )
    SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, offer_id::text AS offer_id,
           sum(amount_micros)::bigint AS earned, count(*) AS requests
    FROM earned WHERE created_at >= ${since}::timestamptz
    GROUP BY 1, 2 ORDER BY 1, 2`;
  return {
    object: "list",
    data: rows.map((r) => ({ day: r.day, offer: r.offer_id, earned: formatMicros(BigInt(r.earned)), requests: Number(r.requests) })),
  };
}
