import "server-only";
import type { PaymentStatus } from "@prisma/client";
import { db } from "@/lib/db/client";
import { getOrCreateLedgerAccount } from "@/lib/ledger/accounts";
import { postEntry } from "@/lib/ledger/post-entry";
import { EXTERNAL_LEDGER_ACCOUNT_ID } from "@/lib/ledger/system-accounts";

/**
 * Marks a payment settled and credits its account, in one transaction. The conditional status update is the
 * guard that makes crediting happen once: the request that settled it and the reconciler may both try, and
 * only the one that moves the row out of `fromStatuses` posts the top-up entry. Returns whether this call credited.
 */
export async function creditSettledPayment(
  paymentId: string,
  txHash: string,
  fromStatuses: PaymentStatus[] = ["pending"],
): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const marked = await tx.payment.updateMany({
      where: { id: paymentId, status: { in: fromStatuses } },
      data: { status: "settled", txHash, settledAt: new Date(), failureReason: null },
    });
    if (marked.count === 0) return false;
    const payment = await tx.payment.findUniqueOrThrow({ where: { id: paymentId }, select: { accountId: true, amountMicros: true } });
    const buyer = await getOrCreateLedgerAccount(tx, "buyer", payment.accountId);
    await postEntry(tx, {
      kind: "topup",
      paymentId,
      txHash,
      lines: [
        { ledgerAccountId: EXTERNAL_LEDGER_ACCOUNT_ID, amountMicros: -payment.amountMicros },
        { ledgerAccountId: buyer.id, amountMicros: payment.amountMicros },
      ],
    });
    return true;
  });
}

/** Records that a pending payment cannot settle any more; returns whether this call changed it. */
export async function markPaymentFailed(paymentId: string, reason: string, txHash?: string | null): Promise<boolean> {
  const marked = await db.payment.updateMany({
    where: { id: paymentId, status: "pending" },
    data: { status: "failed", failureReason: reason.slice(0, 500), ...(txHash !== undefined ? { txHash } : {}) },
  });
  return marked.count === 1;
}
