import "server-only";
import { metrics } from "@/lib/ops/metrics";
import type { Withdrawal } from "@prisma/client";
import { encodeFunctionData, getAddress, isAddressEqual, type Address, type Hash } from "viem";
import { publicClient } from "@/lib/chain/client";
import { findMinedTransactionAtNonce, getReceiptOrNull } from "@/lib/chain/lookups";
import { usdcAbi } from "@/lib/chain/usdc-abi";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { findLedgerAccount, getBalance } from "@/lib/ledger/accounts";
import { postEntry } from "@/lib/ledger/post-entry";
import { EXTERNAL_LEDGER_ACCOUNT_ID } from "@/lib/ledger/system-accounts";
import { log } from "@/lib/log";
import { formatMicros } from "@/lib/money";
import { assertAmountInRange, configuredMicros } from "@/lib/payments/amount";
import { faults } from "@/lib/payments/faults";
import {
  RelayerSendError,
  describeChainError,
  sendRelayerTransaction,
  waitForReceipt,
  type SignedTransaction,
} from "@/lib/payments/relayer";
import { treasuryAddress, usdcAddress } from "@/lib/payments/x402";
import type { WithdrawalList, WithdrawalView } from "@/lib/payments/schemas";

const RECONCILE_GRACE_MS = 2 * 60_000;
/** A withdrawal still pending this long after it was requested is logged as stuck on every reconciliation run. */
export const WITHDRAWAL_STUCK_AFTER_MS = 10 * 60_000;
/**
 * How deep the transaction that used a withdrawal's nonce must be mined before it counts as proof (~24 s on Base):
 * a node of a load-balanced RPC that lags behind by fewer blocks still sees the receipt.
 */
export const NONCE_PROOF_CONFIRMATIONS = 12n;

export function assertWithdrawalAmount(micros: bigint): bigint {
  return assertAmountInRange(micros, { minMicros: configuredMicros(env.WITHDRAWAL_MIN_USD) });
}

/**
 * Pays a supplier's earnings out to their own wallet in real USDC: the earnings are debited first (a `withdrawal`
 * entry, supplier → external) in one transaction, then the relayer sends `transferFrom(treasury, wallet)`, then the
 * withdrawal is marked sent. It is reversed (`withdrawal_reversal`, answered 502 `withdrawal_failed`) only on proof
 * that the transfer can never happen: nothing was signed (the node refused it at gas estimation), a failed receipt,
 * or the sender's nonce used by another transaction (reconciliation). Anything else, a send error such as
 * "already known" or an RPC that does not know the transaction included, leaves it pending (`withdrawal_pending`)
 * and reconciliation checks it again: behind a load-balanced RPC such a transfer can still be mined.
 */
export async function requestWithdrawal(
  accountId: string,
  walletAddress: string,
  amountMicros: bigint,
  idempotencyKey: string | null = null,
): Promise<WithdrawalView> {
  const toAddress = getAddress(walletAddress);
  // The same key again (a client whose answer was lost): the withdrawal it made, as it stands now, never a second one.
  const earlier = idempotencyKey ? await findByIdempotencyKey(accountId, idempotencyKey, amountMicros) : null;
  if (earlier) return toView(earlier);
  let withdrawal: Withdrawal;
  try {
    withdrawal = await debitEarnings(accountId, toAddress, amountMicros, idempotencyKey);
  } catch (error) {
    // A concurrent request with the same key inserted first (the unique (account_id, idempotency_key) decided).
    const twin = idempotencyKey && isUniqueViolation(error) ? await findByIdempotencyKey(accountId, idempotencyKey, amountMicros) : null;
    if (twin) return toView(twin);
    throw error;
  }

  let hash: Hash;
  try {
    hash = await sendRelayerTransaction(
      {
        to: usdcAddress,
        data: encodeFunctionData({ abi: usdcAbi, functionName: "transferFrom", args: [treasuryAddress, toAddress, amountMicros] }),
      },
      { onSigned: (_hash, signed) => recordSignedTransfer(withdrawal.id, signed) },
    );
  } catch (error) {
    if (error instanceof RelayerSendError && !error.signed) {
      throw await failWithdrawal(withdrawal, `transfer refused: ${error.message}`);
    }
    throw pendingError(withdrawal, error);
  }

  try {
    await faults.beforeReceipt?.(hash);
    const receipt = await waitForReceipt(hash);
    // viem answers with a replacement's receipt when another transaction took the nonce: that proves nothing yet
    // about ours at this depth, so reconciliation decides.
    if (receipt.transactionHash.toLowerCase() !== hash.toLowerCase()) throw new Error(`nonce taken by ${receipt.transactionHash}`);
    if (receipt.status !== "success") throw await failWithdrawal(withdrawal, `transfer ${hash} reverted`);
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw pendingError(withdrawal, error);
  }
  await markSent(withdrawal.id, hash);
  return toView(await db.withdrawal.findUniqueOrThrow({ where: { id: withdrawal.id } }));
}

async function findByIdempotencyKey(accountId: string, idempotencyKey: string, amountMicros: bigint): Promise<Withdrawal | null> {
  const found = await db.withdrawal.findUnique({ where: { accountId_idempotencyKey: { accountId, idempotencyKey } } });
  if (found && found.amountMicros !== amountMicros) {
    throw new AppError(
      "invalid_request",
      `This Idempotency-Key was used for a withdrawal of ${formatMicros(found.amountMicros)}; use a new key for another amount.`,
      { details: { param: "idempotency-key" } },
    );
  }
  return found;
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";
}

async function debitEarnings(
  accountId: string,
  toAddress: Address,
  amountMicros: bigint,
  idempotencyKey: string | null,
): Promise<Withdrawal> {
  return db.$transaction(async (tx) => {
    const earnings = await findLedgerAccount(tx, "supplier", accountId);
    const available = earnings?.availableMicros ?? 0n;
    if (!earnings || available < amountMicros) throw insufficientEarnings(available, amountMicros);
    const withdrawal = await tx.withdrawal.create({ data: { accountId, toAddress, amountMicros, idempotencyKey } });
    try {
      await postEntry(tx, {
        kind: "withdrawal",
        withdrawalId: withdrawal.id,
        lines: [
          { ledgerAccountId: earnings.id, amountMicros: -amountMicros },
          { ledgerAccountId: EXTERNAL_LEDGER_ACCOUNT_ID, amountMicros },
        ],
      });
    } catch (error) {
      // The read above raced another withdrawal; the conditional debit is the real guard.
      if (error instanceof AppError && error.code === "insufficient_balance") {
        throw insufficientEarnings((await getBalance("supplier", accountId)).availableMicros, amountMicros);
      }
      throw error;
    }
    return withdrawal;
  });
}

function insufficientEarnings(availableMicros: bigint, amountMicros: bigint) {
  return new AppError(
    "insufficient_earnings",
    `You can withdraw at most ${formatMicros(availableMicros)} USDC, not ${formatMicros(amountMicros)}.`,
    { details: { available: formatMicros(availableMicros) } },
  );
}

/** Persists hash, sender and nonce before the broadcast; refuses (so nothing is sent) if reconciliation already closed the row. */
async function recordSignedTransfer(withdrawalId: string, signed: SignedTransaction) {
  const updated = await db.withdrawal.updateMany({
    where: { id: withdrawalId, status: "pending" },
    data: { txHash: signed.hash, txFrom: signed.from, txNonce: signed.nonce },
  });
  if (updated.count !== 1) throw new Error(`withdrawal ${withdrawalId} is no longer pending`);
}

async function markSent(withdrawalId: string, txHash: string): Promise<boolean> {
  const updated = await db.withdrawal.updateMany({
    where: { id: withdrawalId, status: "pending" },
    data: { status: "sent", txHash, completedAt: new Date() },
  });
  if (updated.count === 1) metrics.withdrawals.inc({ outcome: "sent" });
  return updated.count === 1;
}

/** Restores the earnings of a withdrawal whose transfer is proven never to happen; idempotent. */
async function reverseWithdrawal(withdrawal: Withdrawal, reason: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const updated = await tx.withdrawal.updateMany({
      where: { id: withdrawal.id, status: "pending" },
      data: { status: "failed", failureReason: reason.slice(0, 500), completedAt: new Date() },
    });
    if (updated.count !== 1) return false;
    metrics.withdrawals.inc({ outcome: "reversed" });
    const earnings = await findLedgerAccount(tx, "supplier", withdrawal.accountId);
    if (!earnings) throw new Error(`withdrawal ${withdrawal.id} has no earnings account to restore`);
    await postEntry(tx, {
      kind: "withdrawal_reversal",
      withdrawalId: withdrawal.id,
      lines: [
        { ledgerAccountId: EXTERNAL_LEDGER_ACCOUNT_ID, amountMicros: -withdrawal.amountMicros },
        { ledgerAccountId: earnings.id, amountMicros: withdrawal.amountMicros },
      ],
    });
    return true;
  });
}

async function failWithdrawal(withdrawal: Withdrawal, reason: string): Promise<AppError> {
  await reverseWithdrawal(withdrawal, reason);
  log.warn("withdrawal failed and was reversed", { withdrawalId: withdrawal.id, reason });
  return new AppError("withdrawal_failed", `The USDC transfer failed (${reason}); your earnings were restored.`, {
    details: { withdrawalId: withdrawal.id },
  });
}

function pendingError(withdrawal: Withdrawal, cause: unknown) {
  log.error("withdrawal left pending for reconciliation", { withdrawalId: withdrawal.id, error: cause });
  return new AppError(
    "withdrawal_pending",
    "The transfer was sent but not confirmed yet; the withdrawal stays pending and is completed or reversed automatically.",
    { details: { withdrawalId: withdrawal.id }, cause },
  );
}

export type WithdrawalReconcileReport = { examined: number; sent: number; reversed: number; pending: number; stuck: number };

/**
 * Resolves withdrawals a request left pending (a crash or an RPC failure after the debit): a mined transfer marks
 * it sent; a reverted one, or one whose nonce another transaction of its sender has used (so it can never be
 * mined), is reversed; everything else stays pending and is looked at again on the next run. One still pending
 * WITHDRAWAL_STUCK_AFTER_MS after it was requested is logged as stuck on every run, with why (the metric
 * svc_withdrawals_oldest_pending_seconds shows it too): the chain cannot say, and an operator should look.
 */
export async function reconcileWithdrawals(
  options: { graceMs?: number; now?: Date; limit?: number; accountId?: string } = {},
): Promise<WithdrawalReconcileReport> {
  const now = options.now ?? new Date();
  const candidates = await db.withdrawal.findMany({
    where: {
      status: "pending",
      createdAt: { lt: new Date(now.getTime() - (options.graceMs ?? RECONCILE_GRACE_MS)) },
      ...(options.accountId ? { accountId: options.accountId } : {}),
    },
    orderBy: { createdAt: "asc" },
    take: options.limit ?? 100,
  });
  const report: WithdrawalReconcileReport = { examined: candidates.length, sent: 0, reversed: 0, pending: 0, stuck: 0 };
  for (const withdrawal of candidates) {
    const resolution = await resolveWithdrawal(withdrawal).catch((error: unknown): Resolution => {
      log.warn("could not reconcile a withdrawal yet", { withdrawalId: withdrawal.id, error: describeChainError(error) });
      return { outcome: "pending", why: `no answer from the chain: ${describeChainError(error)}` };
    });
    report[resolution.outcome]++;
    const pendingMs = now.getTime() - withdrawal.createdAt.getTime();
    if (resolution.outcome === "pending" && !resolution.closedElsewhere && pendingMs >= WITHDRAWAL_STUCK_AFTER_MS) {
      report.stuck++;
      log.error("withdrawal stuck pending", {
        withdrawalId: withdrawal.id,
        pendingSeconds: Math.floor(pendingMs / 1000),
        amount: formatMicros(withdrawal.amountMicros),
        txHash: withdrawal.txHash,
        txFrom: withdrawal.txFrom,
        txNonce: withdrawal.txNonce,
        why: resolution.why,
      });
    }
  }
  return report;
}

/** `why` says what kept it pending; `closedElsewhere` that another run or the request closed it meanwhile. */
type Resolution = { outcome: "sent" | "reversed" | "pending"; why?: string; closedElsewhere?: true };

/**
 * What the chain proves about one pending withdrawal. Only three answers move it: its own receipt (sent, or
 * reverted), or another transaction positively identified at its nonce, mined NONCE_PROOF_CONFIRMATIONS deep, whose
 * own receipt was fetched. The RPC's "no receipt" for our hash is not enough on its own (a lagging node behind a load
 * balancer, or one that prunes its transaction index, says it of a mined transfer, and then the transaction holding
 * the nonce is ours), and an RPC error is no answer at all: it throws, and the withdrawal stays pending.
 */
async function resolveWithdrawal(withdrawal: Withdrawal): Promise<Resolution> {
  const closed = (done: boolean, outcome: "sent" | "reversed"): Resolution =>
    done ? { outcome } : { outcome: "pending", closedElsewhere: true };
  // onSigned runs before every broadcast, so no hash means nothing was ever signed, let alone sent.
  if (!withdrawal.txHash) return closed(await reverseWithdrawal(withdrawal, "transfer never sent"), "reversed");
  const hash = withdrawal.txHash as Hash;
  const receipt = await getReceiptOrNull(hash);
  if (receipt) {
    if (receipt.status === "success") return closed(await markSent(withdrawal.id, hash), "sent");
    return closed(await reverseWithdrawal(withdrawal, `transfer ${hash} reverted`), "reversed");
  }
  if (!withdrawal.txFrom || withdrawal.txNonce === null) return { outcome: "pending", why: "no receipt, and no sender and nonce recorded" };
  const from = getAddress(withdrawal.txFrom);
  const head = await publicClient.getBlockNumber({ cacheTime: 0 });
  if (head < NONCE_PROOF_CONFIRMATIONS) return { outcome: "pending", why: "no receipt; the chain is too short for a nonce proof" };
  const deepest = head - NONCE_PROOF_CONFIRMATIONS;

  const holder = await findMinedTransactionAtNonce(from, withdrawal.txNonce, deepest);
  if (!holder) return { outcome: "pending", why: `no receipt, and nonce ${withdrawal.txNonce} unused at block ${deepest}` };
  if (holder.hash.toLowerCase() === hash.toLowerCase()) {
    // Our transfer holds the nonce, so it was mined; the node just has no receipt for it (yet, or any more).
    return { outcome: "pending", why: `transfer mined in block ${holder.blockNumber} but the RPC has no receipt for it` };
  }
  const holderReceipt = await getReceiptOrNull(holder.hash);
  if (!holderReceipt || holderReceipt.blockNumber > deepest || !isAddressEqual(holderReceipt.from, from)) {
    return { outcome: "pending", why: `nonce ${withdrawal.txNonce} held by ${holder.hash}, whose receipt is not confirmed` };
  }
  const reason =
    `transfer ${hash} can never be mined: nonce ${withdrawal.txNonce} of ${from} was used by another transaction, ` +
    `${holder.hash} (block ${holderReceipt.blockNumber})`;
  return closed(await reverseWithdrawal(withdrawal, reason), "reversed");
}

export async function listWithdrawals(
  accountId: string,
  options: { limit?: number; idempotencyKey?: string } = {},
): Promise<WithdrawalList> {
  const { limit = 100, idempotencyKey } = options;
  const rows = await db.withdrawal.findMany({
    where: { accountId, ...(idempotencyKey !== undefined && { idempotencyKey }) },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit,
  });
  return { object: "list", data: rows.map(toView) };
}

function toView(w: Withdrawal): WithdrawalView {
  return {
    id: w.id,
    amount: formatMicros(w.amountMicros),
    to_address: w.toAddress,
    status: w.status,
    transaction: w.txHash,
    failure_reason: w.failureReason,
    idempotency_key: w.idempotencyKey,
    created_at: w.createdAt.toISOString(),
    completed_at: w.completedAt?.toISOString() ?? null,
  };
}
