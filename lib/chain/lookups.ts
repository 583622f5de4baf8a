import "server-only";
import {
  BaseError,
  HttpRequestError,
  TimeoutError,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  isAddressEqual,
  type Address,
  type Hash,
  type TransactionReceipt,
} from "viem";
import { publicClient } from "@/lib/chain/client";

/**
 * Chain reads whose "no" is the chain's own answer, never a failure to ask. An RPC that rate-limits (429), fails
 * (5xx), times out or answers a JSON-RPC error has said nothing about the chain: these functions throw then, and a
 * caller that must decide something (reverse a withdrawal, re-sign a transfer) decides nothing on a throw.
 */

/** The transaction's receipt; null only when the node answers that it has none (viem's TransactionReceiptNotFoundError). */
export async function getReceiptOrNull(hash: Hash): Promise<TransactionReceipt | null> {
  try {
    return await publicClient.getTransactionReceipt({ hash });
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return null;
    throw error;
  }
}

/** Whether the node has this transaction, pending or mined; throws when it could not be asked. */
export async function isTransactionKnown(hash: Hash): Promise<boolean> {
  try {
    await publicClient.getTransaction({ hash });
    return true;
  } catch (error) {
    if (error instanceof TransactionNotFoundError) return false;
    throw error;
  }
}

export type MinedTransaction = { hash: Hash; blockNumber: bigint };

/** Probes of a nonce's block before giving up: enough for any chain (2^32 blocks) at two probes per halving. */
const MAX_NONCE_PROBES = 64;

/**
 * The transaction of `sender` that used `nonce`, mined at or below block `maxBlock`; null when the sender's count at
 * `maxBlock` shows the nonce still unused. Two ways, both positive identifications of one transaction:
 * `eth_getTransactionBySenderAndNonce` (reth, anvil: one call), else the block that consumed the nonce, found by
 * bisecting the sender's transaction count over recent blocks (galloping back from `maxBlock`, so a nonce used k
 * blocks earlier costs about 2·log2(k) calls of recent state), and the sender's transaction in that block.
 * Throws on any failure to ask, or when the answers do not fit together.
 */
export async function findMinedTransactionAtNonce(sender: Address, nonce: number, maxBlock: bigint): Promise<MinedTransaction | null> {
  if ((await countAt(sender, maxBlock)) <= nonce) return null;
  const direct = await lookUpBySenderAndNonce(sender, nonce, maxBlock);
  if (direct) return direct;

  const block = await findBlockThatUsedNonce(sender, nonce, maxBlock);
  const { transactions } = await publicClient.getBlock({ blockNumber: block, includeTransactions: true });
  const found = transactions.find((tx) => isAddressEqual(tx.from, sender) && tx.nonce === nonce);
  if (!found) throw new Error(`block ${block} moved ${sender}'s nonce past ${nonce} but holds no transaction of it at that nonce`);
  return { hash: found.hash, blockNumber: block };
}

/** The one-call lookup; null when the node lacks the method or the transaction (the block search then decides). */
async function lookUpBySenderAndNonce(sender: Address, nonce: number, maxBlock: bigint): Promise<MinedTransaction | null> {
  try {
    const tx = await publicClient.getTransaction({ sender, nonce });
    if (tx.blockNumber === null || tx.blockNumber > maxBlock || tx.nonce !== nonce || !isAddressEqual(tx.from, sender)) return null;
    return { hash: tx.hash, blockNumber: tx.blockNumber };
  } catch (error) {
    // An RPC that fails (rather than answering "no such method") fails the block search too: do not pile on.
    if (isTransportError(error)) throw error;
    return null;
  }
}

/** The first block at which the sender's count exceeds `nonce`, given that it does at `maxBlock`. */
async function findBlockThatUsedNonce(sender: Address, nonce: number, maxBlock: bigint): Promise<bigint> {
  let used = maxBlock; // count(used) > nonce
  let unused = -1n; // count(unused) <= nonce (before genesis every count is 0)
  let probes = 0;
  const probe = async (block: bigint) => {
    if (++probes > MAX_NONCE_PROBES) throw new Error(`no block found for nonce ${nonce} of ${sender} in ${MAX_NONCE_PROBES} probes`);
    return (await countAt(sender, block)) > nonce;
  };
  for (let step = 1n; used - step >= 0n; step *= 2n) {
    if (await probe(used - step)) used -= step;
    else {
      unused = used - step;
      break;
    }
  }
  while (used - unused > 1n) {
    const mid = (used + unused) / 2n;
    if (await probe(mid)) used = mid;
    else unused = mid;
  }
  return used;
}

function countAt(address: Address, blockNumber: bigint): Promise<number> {
  return publicClient.getTransactionCount({ address, blockNumber });
}

/** The RPC could not be reached or did not answer in time (HTTP errors, 429 and 5xx included, and timeouts). */
export function isTransportError(error: unknown): boolean {
  return error instanceof BaseError && !!error.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError);
}
