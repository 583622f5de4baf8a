import "server-only";
import type { Payment } from "@prisma/client";
import { isAddressEqual, parseAbiItem, parseEventLogs, type Address, type Hash, type Hex, type TransactionReceipt } from "viem";
import { publicClient } from "@/lib/chain/client";
import { getReceiptOrNull } from "@/lib/chain/lookups";
import { usdcAbi } from "@/lib/chain/usdc-abi";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
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
/** Pages of logs one run reads per payment; the next run carries on from the stored cursor. */
const MAX_LOG_PAGES_PER_RUN = 25;

/** How reconciliation reads logs: eth_getLogs over at most `range` blocks per call, `pages` calls per payment and run. */
type LogPaging = { range: bigint; pages: number };

const authorizationCanceled = parseAbiItem("event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)");
const authorizationUsed = parseAbiItem("event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)");

export type PaymentReconcileReport = { examined: number; credited: number; failed: number; unresolved: number };

/**
 * Resolves payments from the chain: pending ones older than the grace period (a crash or an RPC failure between
 * recording and crediting), and recently failed ones. An authorization used on chain by a matching transfer is
 * credited exactly once (the credit's conditional update makes reruns and races no-ops); one still unused when
 * the chain passes its validBefore can never settle and is marked failed. Anything else waits for the next run.
 */
export async function reconcilePayments(
  options: { graceMs?: number; now?: Date; limit?: number; logBlockRange?: number; maxLogPages?: number; accountId?: string } = {},
): Promise<PaymentReconcileReport> {
  const now = options.now ?? new Date();
  const paging: LogPaging = {
    range: BigInt(options.logBlockRange ?? env.RPC_LOG_BLOCK_RANGE),
    pages: options.maxLogPages ?? MAX_LOG_PAGES_PER_RUN,
  };
  const nowSeconds = BigInt(Math.floor(now.getTime() / 1000));
  const candidates = await db.payment.findMany({
    where: {
      OR: [
        { status: "pending", createdAt: { lt: new Date(now.getTime() - (options.graceMs ?? PAYMENT_RECONCILE_GRACE_MS)) } },
        { status: "failed", validBefore: { gt: nowSeconds - LATE_SETTLEMENT_WINDOW_SECONDS } },
      ],
      ...(options.accountId ? { accountId: options.accountId } : {}),
    },
    orderBy: { createdAt: "asc" },
    take: options.limit ?? 100,
  });
  const report: PaymentReconcileReport = { examined: candidates.length, credited: 0, failed: 0, unresolved: 0 };
  if (candidates.length === 0) return report;

  const latest = await publicClient.getBlock({ blockTag: "latest" });
  for (const payment of candidates) {
    try {
      const outcome = await resolvePayment(payment, latest.number, latest.timestamp, nowSeconds, paging);
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
  paging: LogPaging,
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
    const found = await findSettlement(payment, latestBlock, nowSeconds, paging);
    if (found.txHash) {
      const credited = await creditSettledPayment(payment.id, found.txHash, [payment.status]);
      if (credited)
        log.info("credited a payment found settled on chain", { paymentId: payment.id, txHash: found.txHash, previous: payment.status });
      return credited ? "credited" : "unresolved";
    }
    if (payment.status === "pending" && found.canceled) {
      return (await markPaymentFailed(payment.id, "the payer canceled the authorization")) ? "failed" : "unresolved";
    }
    if (found.complete) log.warn("authorization used on chain but no matching transfer found", { paymentId: payment.id });
    return "unresolved";
  }

  // An unused authorization can still be executed until a block's timestamp reaches validBefore; after that, never.
  if (payment.status === "pending" && chainTime >= payment.validBefore) {
    return (await markPaymentFailed(payment.id, "the authorization expired without settling")) ? "failed" : "unresolved";
  }
  return "unresolved";
}

type Found = { txHash: Hash | null; canceled: boolean; complete: boolean };

/**
 * The transaction that executed this authorization as the exact transfer asked for, if there is one, and whether
 * the payer canceled it. Someone else may have submitted the signed authorization, so its AuthorizationUsed and
 * AuthorizationCanceled events are searched, in pages of at most `paging.range` blocks (public RPCs cap a getLogs
 * range), from where the last run stopped (payments.logs_scanned_to) up to the latest block.
 */
async function findSettlement(payment: Payment, latestBlock: bigint, nowSeconds: bigint, paging: LogPaging): Promise<Found> {
  if (payment.txHash) {
    // Only the node's "no receipt" sends the search on to the logs: a failed lookup is no answer, and a rate-limited
    // RPC would only be asked for pages of logs next.
    const receipt = await getReceiptOrNull(payment.txHash as Hash);
    if (receipt && isSettlementOf(receipt, payment)) return { txHash: receipt.transactionHash, canceled: false, complete: true };
  }
  const lookback = lookbackFrom(payment, latestBlock, nowSeconds);
  let from = payment.logsScannedTo !== null && payment.logsScannedTo + 1n > lookback ? payment.logsScannedTo + 1n : lookback;
  const args = { authorizer: payment.payer as Address, nonce: payment.authorizationNonce as Hex };
  let canceled = false;
  for (let page = 0; page < paging.pages && from <= latestBlock; page++) {
    const to = from + paging.range - 1n < latestBlock ? from + paging.range - 1n : latestBlock;
    const [usedLogs, canceledLogs] = await Promise.all([
      publicClient.getLogs({ address: payment.asset as Address, event: authorizationUsed, args, fromBlock: from, toBlock: to }),
      publicClient.getLogs({ address: payment.asset as Address, event: authorizationCanceled, args, fromBlock: from, toBlock: to }),
    ]);
    for (const entry of usedLogs) {
      const receipt = await publicClient.getTransactionReceipt({ hash: entry.transactionHash });
      if (isSettlementOf(receipt, payment)) return { txHash: receipt.transactionHash, canceled: false, complete: true };
    }
    canceled ||= canceledLogs.length > 0;
    await db.payment.update({ where: { id: payment.id }, data: { logsScannedTo: to } });
    from = to + 1n;
  }
  return { txHash: null, canceled, complete: from > latestBlock };
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
