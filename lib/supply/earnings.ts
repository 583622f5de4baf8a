import "server-only";
import { db } from "@/lib/db";
import { getBalance } from "@/lib/ledger/accounts";
import { formatMicros } from "@/lib/money";
import type { Earnings } from "@/lib/supply/schemas";

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
