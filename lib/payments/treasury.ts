import "server-only";
import { createWalletClient, encodeFunctionData, formatEther, http, maxUint256, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { publicClient, relayerAccount } from "@/lib/chain/client";
import { BASE_CHAIN_ID } from "@/lib/chain/constants";
import { usdcAbi } from "@/lib/chain/usdc-abi";
import { env } from "@/lib/env";
import { formatMicros } from "@/lib/money";
import { treasuryAddress, usdcAddress } from "@/lib/payments/x402";

/**
 * The treasury's side of withdrawals (lib/payments/withdrawals.ts): the relayer pays a supplier with
 * `transferFrom(treasury, supplier)`, so the treasury must have approved the relayer on USDC for at least what it may
 * pay out, and the relayer must hold ETH for gas. Nothing in the app sets that allowance (the app never holds the
 * treasury's key); `npm run treasury` (scripts/treasury.ts) reads it, and sets it when given the key, or prints the
 * transaction for whoever holds it (a multisig, a hardware wallet).
 */

/** Below this the relayer cannot be counted on to pay gas for settlements and withdrawals on Base. */
export const RELAYER_MIN_GAS_WEI = 100_000_000_000_000n; // 0.0001 ETH

export type TreasuryStatus = {
  chainId: number;
  usdc: Address;
  treasury: Address;
  relayer: Address;
  /** The relayer's USDC allowance on the treasury, micro-USDC (maxUint256 when unlimited). */
  allowanceMicros: bigint;
  treasuryBalanceMicros: bigint;
  relayerGasWei: bigint;
  /** What stops withdrawals (empty: nothing does, up to `requiredMicros`). */
  problems: string[];
  /** The allowance the check asked for: the given minimum, else the treasury's whole balance. */
  requiredMicros: bigint;
};

/** Reads the chain and says what would make a withdrawal of up to `minimumMicros` (default: the balance) fail. */
export async function readTreasuryStatus(minimumMicros?: bigint): Promise<TreasuryStatus> {
  const chainId = await publicClient.getChainId();
  const code = await publicClient.getCode({ address: usdcAddress });
  const status: TreasuryStatus = {
    chainId,
    usdc: usdcAddress,
    treasury: treasuryAddress,
    relayer: relayerAccount.address,
    allowanceMicros: 0n,
    treasuryBalanceMicros: 0n,
    relayerGasWei: await publicClient.getBalance({ address: relayerAccount.address }),
    problems: [],
    requiredMicros: minimumMicros ?? 0n,
  };
  if (chainId !== BASE_CHAIN_ID) status.problems.push(`BASE_RPC_URL serves chain ${chainId}, not Base (${BASE_CHAIN_ID})`);
  if (!code || code === "0x") {
    status.problems.push(`no contract at USDC_ADDRESS ${usdcAddress} on this chain`);
    return status;
  }
  const [allowance, balance] = await Promise.all([
    publicClient.readContract({
      address: usdcAddress,
      abi: usdcAbi,
      functionName: "allowance",
      args: [treasuryAddress, relayerAccount.address],
    }),
    publicClient.readContract({ address: usdcAddress, abi: usdcAbi, functionName: "balanceOf", args: [treasuryAddress] }),
  ]);
  status.allowanceMicros = allowance;
  status.treasuryBalanceMicros = balance;
  status.requiredMicros = minimumMicros ?? balance;
  if (allowance < status.requiredMicros) {
    status.problems.push(
      `the relayer may move ${describeMicros(allowance)} USDC from the treasury, less than ${describeMicros(status.requiredMicros)}: ` +
        "withdrawals beyond it fail on chain (npm run treasury -- approve)",
    );
  }
  if (status.relayerGasWei < RELAYER_MIN_GAS_WEI) {
    status.problems.push(
      `the relayer holds ${formatEther(status.relayerGasWei)} ETH, less than ${formatEther(RELAYER_MIN_GAS_WEI)}: it cannot pay gas for settlements and withdrawals`,
    );
  }
  return status;
}

/** The transaction that sets the relayer's allowance: `USDC.approve(relayer, amount)`, sent from the treasury. */
export function approveRelayerCall(amountMicros: bigint): { from: Address; to: Address; data: Hex } {
  return {
    from: treasuryAddress,
    to: usdcAddress,
    data: encodeFunctionData({ abi: usdcAbi, functionName: "approve", args: [relayerAccount.address, amountMicros] }),
  };
}

/**
 * Sends the approval signed with TREASURY_PRIVATE_KEY (which must be the treasury's) and waits for its receipt.
 * Returns the transaction hash; throws when the key is not set, not the treasury's, or the transaction reverted.
 */
export async function approveRelayer(amountMicros: bigint): Promise<Hex> {
  if (!env.TREASURY_PRIVATE_KEY) throw new Error("TREASURY_PRIVATE_KEY is not set");
  const account = privateKeyToAccount(env.TREASURY_PRIVATE_KEY as Hex);
  if (account.address.toLowerCase() !== treasuryAddress.toLowerCase()) {
    throw new Error(`TREASURY_PRIVATE_KEY is the key of ${account.address}, not of the treasury ${treasuryAddress}`);
  }
  const wallet = createWalletClient({ account, chain: base, transport: http(env.BASE_RPC_URL, { timeout: env.RPC_TIMEOUT_MS }) });
  const call = approveRelayerCall(amountMicros);
  const hash = await wallet.sendTransaction({ to: call.to, data: call.data });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 120_000 });
  if (receipt.status !== "success") throw new Error(`the approval ${hash} reverted`);
  return hash;
}

export function describeMicros(micros: bigint): string {
  return micros === maxUint256 ? "unlimited" : formatMicros(micros);
}
