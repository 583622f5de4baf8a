import "server-only";
import type { Hash, Hex } from "viem";

/**
 * Fault-injection points for the tests of crash and chain-failure handling (a throw here stands for the process
 * dying or the RPC failing at that exact step). Nothing sets them outside tests.
 */
export const faults: {
  /** After the payment row is recorded `pending`, before the transfer is sent. */
  topUpBeforeSettle?: (paymentId: string) => Promise<void>;
  /** After a relayer transaction was signed (and its hash recorded), before it is broadcast. */
  beforeBroadcast?: (serializedTransaction: Hex) => Promise<void>;
  /** After a top-up or withdrawal transfer was broadcast, before its receipt is read. */
  beforeReceipt?: (hash: Hash) => Promise<void>;
  /** After the transfer settled on chain, before the credit transaction. */
  topUpBeforeCredit?: (paymentId: string) => Promise<void>;
} = {};
