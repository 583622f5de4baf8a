import "server-only";
import pg from "pg";
import { BaseError, NonceTooLowError, keccak256, type Address, type Hash, type Hex, type TransactionReceipt } from "viem";
import { publicClient, relayerAccount, relayerClient } from "@/lib/chain/client";
import { isTransactionKnown, isTransportError } from "@/lib/chain/lookups";
import { pgConfig } from "@/lib/db/pools";
import { log } from "@/lib/log";
import { metrics } from "@/lib/ops/metrics";
import { faults } from "@/lib/payments/faults";

/** Receipt waits stay well inside a request's lifetime; a slower chain leaves the work to reconciliation. */
export const RECEIPT_TIMEOUT_MS = 30_000;
const RECEIPT_POLL_MS = 250;
const NONCE_RETRIES = 5;
/** A nonce row ahead of the chain that has not moved for this long counted transactions the chain does not have. */
const STALE_NONCE_SECONDS = 30;

/**
 * A relayer transaction that did not go out. `broadcast: "not_sent"` means the node answered with a refusal (or it
 * never left this process); `"unknown"` means the connection failed while sending, so it may still be mined.
 * `signed` says whether a signed transaction exists at all: once one does, a refusal of this one broadcast proves
 * nothing (another node, or an earlier attempt, may have it), and only its nonce being used by another
 * transaction, or a failed receipt, shows that it will never move money.
 */
export class RelayerSendError extends Error {
  constructor(
    message: string,
    readonly broadcast: "not_sent" | "unknown",
    options?: { cause?: unknown; signed?: boolean },
  ) {
    super(message, { cause: options?.cause });
    this.name = "RelayerSendError";
    this.signed = options?.signed ?? false;
  }
  readonly signed: boolean;
}

/** What a signed relayer transaction is, for whoever must be able to prove later that it can no longer be mined. */
export type SignedTransaction = { hash: Hash; from: Address; nonce: number };

/** Settles when the send before the latest one has finished, whatever its outcome: turns, never results. */
let turn: Promise<void> = Promise.resolve();

// One relayer transaction at a time per process (the row lock below orders the processes among themselves). The
// queue holds turns, not sends, so no send's error is caught here: each caller gets its own outcome from `fn`.
function serialize<T>(fn: () => Promise<T>): Promise<T> {
  let done!: () => void;
  const previous = turn;
  turn = new Promise<void>((resolve) => (done = resolve));
  return previous.then(fn).finally(done);
}

/**
 * The relayer's nonce sequence, shared by every instance through PostgreSQL: a session advisory lock keyed by the
 * relayer's address is held on a connection of its own from picking the nonce until the node has the transaction,
 * so two instances never sign with the same nonce. The nonce is the larger of the relayer_nonces row's and the
 * chain's pending count (a transaction sent from elsewhere moves the chain ahead); the row moves past it only once
 * the node has the transaction, so a refusal or a lost connection leaves the nonce for the next send (which then
 * replaces a transaction that never arrived, the proof reconciliation of withdrawals waits for). A crash ends the
 * session and so releases the lock.
 *
 * A lock, not a transaction: `onSigned` commits the hash on the app's pool BEFORE the broadcast, and the embedded
 * database (one backend, scripts/pglite-server.ts) gives the backend to a connection for its whole transaction, so
 * an open transaction here would make that write wait for it.
 */
async function withRelayerNonce<T>(fn: (nonce: number, sent: () => void) => Promise<T>): Promise<T> {
  const address = relayerAccount.address.toLowerCase();
  const lockKey = `svc.relayer_nonce:${address}`;
  const client = new pg.Client(pgConfig());
  // Between its queries (while the node takes the transaction) a dropped connection is an 'error' event: heard here,
  // the next query fails and the send is left for reconciliation; unheard, it would crash the process.
  client.on("error", (error) => log.warn("relayer lock connection failed", { error: error.message }));
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [lockKey]);
    await client.query("INSERT INTO relayer_nonces (address, next_nonce) VALUES ($1, 0) ON CONFLICT (address) DO NOTHING", [address]);
    const { rows } = await client.query<{ next_nonce: string; stale: boolean }>(
      "SELECT next_nonce, updated_at < now() - make_interval(secs => $2) AS stale FROM relayer_nonces WHERE address = $1",
      [address, STALE_NONCE_SECONDS],
    );
    const [row] = rows;
    const pending = await publicClient.getTransactionCount({ address: relayerAccount.address, blockTag: "pending" });
    // Ahead of the chain: another instance's transaction the node has not shown yet (use the row), unless the row
    // has not moved for a while, when what it counted was dropped (or the chain is not the one it counted on):
    // then the chain is right, or every later transaction would wait behind a nonce gap forever.
    const ahead = Number(row.next_nonce) > pending;
    if (ahead && row.stale)
      log.warn("relayer nonce row ahead of the chain and stale; using the chain's count", { row: Number(row.next_nonce), pending });
    const nonce = ahead && !row.stale ? Number(row.next_nonce) : pending;
    let used = false;
    const result = await fn(nonce, () => (used = true));
    if (used) await client.query("UPDATE relayer_nonces SET next_nonce = $2, updated_at = now() WHERE address = $1", [address, nonce + 1]);
    return result;
  } finally {
    // Ending the session releases the lock anyway; the embedded database's one session outlives this connection.
    // Neither failure says anything about the send (its outcome is already decided above), but an unlock that failed
    // on the embedded database would leave the lock held: say so.
    await client
      .query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [lockKey])
      .catch((error: unknown) => log.warn("relayer nonce lock not released explicitly", { error }));
    await client.end().catch((error: unknown) => log.warn("relayer lock connection did not close cleanly", { error }));
  }
}

/**
 * Signs and broadcasts one transaction from the relayer and returns its hash without waiting for a receipt.
 * `onSigned` receives the hash (with sender and nonce) BEFORE the broadcast so the caller can persist it first: a
 * crash after the broadcast then still leaves a hash for reconciliation to look up. If `onSigned` throws, nothing
 * is sent. A node that already has this very transaction ("already known", or "nonce too low" because it was
 * mined) means it went out: the hash is returned, and it is never signed again with another nonce.
 */
export async function sendRelayerTransaction(
  call: { to: Address; data: Hex },
  hooks: { onSigned?: (hash: Hash, signed: SignedTransaction) => Promise<void> } = {},
): Promise<Hash> {
  return serialize(async () => {
    for (let attempt = 1; ; attempt++) {
      const outcome = await withRelayerNonce(async (nonce, sent): Promise<{ hash: Hash } | { retry: true }> => {
        let serializedTransaction: Hex;
        try {
          const request = await relayerClient.prepareTransactionRequest({ account: relayerAccount, to: call.to, data: call.data, nonce });
          serializedTransaction = await relayerClient.signTransaction(request);
        } catch (error) {
          // Includes gas estimation: a transfer that would revert is refused here, before costing gas.
          throw new RelayerSendError(describeChainError(error), "not_sent", { cause: error });
        }
        const hash = keccak256(serializedTransaction);
        await hooks.onSigned?.(hash, { hash, from: relayerAccount.address, nonce });
        try {
          await faults.beforeBroadcast?.(serializedTransaction);
          await publicClient.sendRawTransaction({ serializedTransaction });
          sent();
          metrics.relayerTransactions.inc();
          return { hash };
        } catch (error) {
          if (isAlreadyKnown(error) || (isNonceConflict(error) && (await isKnown(hash)))) {
            sent();
            return { hash };
          }
          // A sender outside this sequence (the same key used elsewhere) took the nonce and ours is not known: that
          // nonce now belongs to another transaction, so this one can never be mined. Sign again.
          if (isNonceConflict(error) && attempt < NONCE_RETRIES) return { retry: true };
          throw new RelayerSendError(describeChainError(error), isTransportError(error) ? "unknown" : "not_sent", {
            cause: error,
            signed: true,
          });
        }
      });
      if ("hash" in outcome) return outcome.hash;
      metrics.relayerResigned.inc();
    }
  });
}

/**
 * Whether the node has this transaction, pending or mined. Only the node's "not found" is a no: an RPC that could
 * not be asked (429, 5xx, a timeout) may be hiding our own mined transaction, and signing the call again with a new
 * nonce would then pay it twice. So that is an unknown outcome, left to reconciliation.
 */
async function isKnown(hash: Hash): Promise<boolean> {
  try {
    return await isTransactionKnown(hash);
  } catch (error) {
    throw new RelayerSendError(`could not tell whether ${hash} is known: ${describeChainError(error)}`, "unknown", {
      cause: error,
      signed: true,
    });
  }
}

export function waitForReceipt(hash: Hash, timeoutMs = RECEIPT_TIMEOUT_MS): Promise<TransactionReceipt> {
  return publicClient.waitForTransactionReceipt({ hash, timeout: timeoutMs, pollingInterval: RECEIPT_POLL_MS });
}

/** The first line of a viem error (its `shortMessage`), without the request dump that follows. */
export function describeChainError(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage || error.message.split("\n")[0];
  return error instanceof Error ? error.message.split("\n")[0] : String(error);
}

function isAlreadyKnown(error: unknown): boolean {
  return /already known|already imported|known transaction/i.test(chainErrorText(error));
}

function chainErrorText(error: unknown): string {
  if (error instanceof BaseError) return `${error.message} ${error.details ?? ""}`;
  return error instanceof Error ? error.message : String(error);
}

function isNonceConflict(error: unknown): boolean {
  if (error instanceof BaseError && error.walk((e) => e instanceof NonceTooLowError)) return true;
  return /nonce too low|replacement transaction underpriced/i.test(chainErrorText(error));
}
