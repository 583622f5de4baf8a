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

/** Receipt waits stay well inside a request's lifetime; a slower chain leaves the work to reconciliation. */
export const RECEIPT_TIMEOUT_MS = 30_000;
const RECEIPT_POLL_MS = 250;
const NONCE_RETRIES = 3;

/**
 * A relayer transaction that did not go out. `broadcast: "not_sent"` is definite (the node refused it, or it
 * never left this process); `"unknown"` means the connection failed while sending, so it may still be mined.
 */
export class RelayerSendError extends Error {
  constructor(
    message: string,
    readonly broadcast: "not_sent" | "unknown",
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "RelayerSendError";
  }
}

let queue: Promise<unknown> = Promise.resolve();

// One relayer transaction at a time per process, so two sends never pick the same nonce.
function serialize<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.then(fn, fn);
  queue = run.catch(() => undefined);
  return run;
}

/**
 * Signs and broadcasts one transaction from the relayer and returns its hash without waiting for a receipt.
 * `onSigned` receives the hash BEFORE the broadcast so the caller can persist it first: a crash after the
 * broadcast then still leaves a hash for reconciliation to look up. If `onSigned` throws, nothing is sent.
 */
export async function sendRelayerTransaction(
  call: { to: Address; data: Hex },
  hooks: { onSigned?: (hash: Hash) => Promise<void> } = {},
): Promise<Hash> {
  return serialize(async () => {
    for (let attempt = 1; ; attempt++) {
      let serializedTransaction: Hex;
      try {
        const request = await relayerClient.prepareTransactionRequest({ account: relayerAccount, to: call.to, data: call.data });
        serializedTransaction = await relayerClient.signTransaction(request);
      } catch (error) {
        // Includes gas estimation: a transfer that would revert is refused here, before costing gas.
        throw new RelayerSendError(describeChainError(error), "not_sent", { cause: error });
      }
      const hash = keccak256(serializedTransaction);
      await hooks.onSigned?.(hash);
      try {
        await publicClient.sendRawTransaction({ serializedTransaction });
        return hash;
      } catch (error) {
        // Another process using the same key took the nonce (tests run files in parallel): sign again.
        if (isNonceConflict(error) && attempt < NONCE_RETRIES) continue;
        throw new RelayerSendError(describeChainError(error), isTransportError(error) ? "unknown" : "not_sent", { cause: error });
      }
    }
  });
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

function isNonceConflict(error: unknown): boolean {
  if (error instanceof BaseError && error.walk((e) => e instanceof NonceTooLowError)) return true;
  return /nonce too low|replacement transaction underpriced/i.test(error instanceof Error ? error.message : "");
}
