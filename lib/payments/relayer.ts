import "server-only";
import {
  BaseError,
  HttpRequestError,
  NonceTooLowError,
  TimeoutError,
  keccak256,
  type Address,
  type Hash,
  type Hex,
  type TransactionReceipt,
} from "viem";
import { publicClient, relayerAccount, relayerClient } from "@/lib/chain/client";
import { faults } from "@/lib/payments/faults";

/** Receipt waits stay well inside a request's lifetime; a slower chain leaves the work to reconciliation. */
export const RECEIPT_TIMEOUT_MS = 30_000;
const RECEIPT_POLL_MS = 250;
const NONCE_RETRIES = 5;

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

let queue: Promise<unknown> = Promise.resolve();

// One relayer transaction at a time per process, so two sends never pick the same nonce.
function serialize<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.then(fn, fn);
  queue = run.catch(() => undefined);
  return run;
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
      let serializedTransaction: Hex;
      let nonce: number;
      try {
        const request = await relayerClient.prepareTransactionRequest({ account: relayerAccount, to: call.to, data: call.data });
        nonce = request.nonce;
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
        return hash;
      } catch (error) {
        if (isAlreadyKnown(error) || (isNonceConflict(error) && (await isKnown(hash)))) return hash;
        // Another process using the same key took the nonce (tests run files in parallel) and ours is not known:
        // that nonce now belongs to another transaction, so this one can never be mined. Sign again.
        if (isNonceConflict(error) && attempt < NONCE_RETRIES) continue;
        throw new RelayerSendError(describeChainError(error), isTransportError(error) ? "unknown" : "not_sent", { cause: error, signed: true });
      }
    }
  });
}

/** Whether the node has this transaction, pending or mined. */
async function isKnown(hash: Hash): Promise<boolean> {
  return publicClient.getTransaction({ hash }).then(
    () => true,
    () => false,
  );
}

export function waitForReceipt(hash: Hash, timeoutMs = RECEIPT_TIMEOUT_MS): Promise<TransactionReceipt> {
  return publicClient.waitForTransactionReceipt({ hash, timeout: timeoutMs, pollingInterval: RECEIPT_POLL_MS });
}

/** The first line of a viem error (its `shortMessage`), without the request dump that follows. */
export function describeChainError(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage || error.message.split("\n")[0];
  return error instanceof Error ? error.message.split("\n")[0] : String(error);
}

function isTransportError(error: unknown): boolean {
  return error instanceof BaseError && !!error.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError);
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
