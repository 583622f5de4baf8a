import "server-only";
import type { Payment } from "@prisma/client";
import { isAddressEqual, parseAbiItem, parseEventLogs, type Address, type Hash, type Hex, type TransactionReceipt } from "viem";
import { publicClient } from "@/lib/chain/client";
import { usdcAbi } from "@/lib/chain/usdc-abi";
import { db } from "@/lib/db";
import { log } from "@/lib/log";
import { creditSettledPayment, markPaymentFailed } from "@/lib/payments/credit";
import { describeChainError } from "@/lib/payments/relayer";

/** A request settles within seconds; reconciliation leaves younger payments to it. */
export const PAYMENT_RECONCILE_GRACE_MS = 60_000;
/**
 * A failed payment's signed authorization stays usable by whoever holds it until validBefore (it is in the calldata
 * of a reverted transaction, for one). Failed payments are rechecked until this long after validBefore, so USDC
 * that reaches the treasury anyway is still credited.
 */
const LATE_SETTLEMENT_WINDOW_SECONDS = 600n;
const BASE_BLOCK_SECONDS = 2;
const LOG_LOOKBACK_MARGIN_BLOCKS = 300n;

const authorizationCanceled = parseAbiItem("event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)");
const authorizationUsed = parseAbiItem("event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)");

export type PaymentReconcileReport = { examined: number; credited: number; failed: number; unresolved: number };

/**
 * Resolves payments from the chain: pending ones older than the grace period (a crash or an RPC failure between
 * recording and crediting), and recently failed ones. An authorization used on chain by a matching transfer is
 * credited exactly once (the credit's conditional update makes reruns and races no-ops); one still unused when
 * the chain passes its validBefore can never settle and is marked failed. Anything else waits for the next run.
 */
export async function reconcilePayments(options: { graceMs?: number; now?: Date; limit?: number } = {}): Promise<PaymentReconcileReport> {
  const now = options.now ?? new Date();
  const nowSeconds = BigInt(Math.floor(now.getTime() / 1000));
  const candidates = await db.payment.findMany({
    where: {
      OR: [
        { status: "pending", createdAt: { lt: new Date(now.getTime() - (options.graceMs ?? PAYMENT_RECONCILE_GRACE_MS)) } },
        { status: "failed", validBefore: { gt: nowSeconds - LATE_SETTLEMENT_WINDOW_SECONDS } },
      ],
    },
    orderBy: { createdAt: "asc" },
    take: options.limit ?? 100,
  });
  const report: PaymentReconcileReport = { examined: candidates.length, credited: 0, failed: 0, unresolved: 0 };
  if (candidates.length === 0) return report;

  const latest = await publicClient.getBlock({ blockTag: "latest" });
  for (const payment of candidates) {
    try {
      const outcome = await resolvePayment(payment, latest.number, latest.timestamp, nowSeconds);
      report[outcome]++;
    } catch (error) {
      report.unresolved++;
      log.warn("could not reconcile a payment yet", { paymentId: payment.id, error: describeChainError(error) });
    }
  }
  if (report.credited || report.failed) log.info("payments reconciled", report);
  return report;
}

async function resolvePayment(
  payment: Payment,
  latestBlock: bigint,
  chainTime: bigint,
  nowSeconds: bigint,
): Promise<"credited" | "failed" | "unresolved"> {
  const payer = payment.payer as Address;
  const nonce = payment.authorizationNonce as Hex;
  const used = await publicClient.readContract({
    address: payment.asset as Address,
    abi: usdcAbi,
    functionName: "authorizationState",
    args: [payer, nonce],
  });

  if (used) {
    const txHash = await findSettlement(payment, latestBlock, nowSeconds);
    if (txHash) {
      const credited = await creditSettledPayment(payment.id, txHash, [payment.status]);
      if (credited) log.info("credited a payment found settled on chain", { paymentId: payment.id, txHash, previous: payment.status });
      return credited ? "credited" : "unresolved";
    }
    if (payment.status === "pending" && (await wasCanceled(payment, latestBlock, nowSeconds))) {
      return (await markPaymentFailed(payment.id, "the payer canceled the authorization")) ? "failed" : "unresolved";
    }
    log.warn("authorization used on chain but no matching transfer found", { paymentId: payment.id });
    return "unresolved";
  }

  // An unused authorization can still be executed until a block's timestamp reaches validBefore; after that, never.
  if (payment.status === "pending" && chainTime >= payment.validBefore) {
    return (await markPaymentFailed(payment.id, "the authorization expired without settling")) ? "failed" : "unresolved";
  }
  return "unresolved";
}

/** The transaction that executed this authorization as the exact transfer asked for, if there is one. */
async function findSettlement(payment: Payment, latestBlock: bigint, nowSeconds: bigint): Promise<Hash | null> {
  if (payment.txHash) {
    const receipt = await publicClient.getTransactionReceipt({ hash: payment.txHash as Hash }).catch(() => null);
    if (receipt && isSettlementOf(receipt, payment)) return receipt.transactionHash;
  }
  // Someone else may have submitted the signed authorization: look for its AuthorizationUsed event.
  const logs = await publicClient.getLogs({
    address: payment.asset as Address,
    event: authorizationUsed,
    args: { authorizer: payment.payer as Address, nonce: payment.authorizationNonce as Hex },
    fromBlock: lookbackFrom(payment, latestBlock, nowSeconds),
    toBlock: latestBlock,
  });
  for (const entry of logs) {
    const receipt = await publicClient.getTransactionReceipt({ hash: entry.transactionHash });
    if (isSettlementOf(receipt, payment)) return receipt.transactionHash;
  }
  return null;
}

async function wasCanceled(payment: Payment, latestBlock: bigint, nowSeconds: bigint): Promise<boolean> {
  const logs = await publicClient.getLogs({
    address: payment.asset as Address,
    event: authorizationCanceled,
    args: { authorizer: payment.payer as Address, nonce: payment.authorizationNonce as Hex },
    fromBlock: lookbackFrom(payment, latestBlock, nowSeconds),
    toBlock: latestBlock,
  });
  return logs.length > 0;
}

/** A successful receipt with this authorization's AuthorizationUsed and its Transfer(payer → payTo, amount). */
function isSettlementOf(receipt: TransactionReceipt, payment: Payment): boolean {
  if (receipt.status !== "success") return false;
  const events = parseEventLogs({
    abi: usdcAbi,
    logs: receipt.logs.filter((l) => isAddressEqual(l.address, payment.asset as Address)),
  });
  const used = events.some(
    (e) =>
      e.eventName === "AuthorizationUsed" &&
      isAddressEqual(e.args.authorizer, payment.payer as Address) &&
      e.args.nonce.toLowerCase() === payment.authorizationNonce.toLowerCase(),
  );
  const transferred = events.some(
    (e) =>
      e.eventName === "Transfer" &&
      isAddressEqual(e.args.from, payment.payer as Address) &&
      isAddressEqual(e.args.to, payment.payTo as Address) &&
      e.args.value === payment.amountMicros,
  );
  return used && transferred;
}

/** The first block that can hold the settlement: the payment's age in Base blocks, plus a margin. */
function lookbackFrom(payment: Payment, latestBlock: bigint, nowSeconds: bigint): bigint {
  const ageSeconds = nowSeconds - BigInt(Math.floor(payment.createdAt.getTime() / 1000));
  const blocks = (ageSeconds > 0n ? ageSeconds : 0n) / BigInt(BASE_BLOCK_SECONDS) + LOG_LOOKBACK_MARGIN_BLOCKS;
  return latestBlock > blocks ? latestBlock - blocks : 0n;
}
