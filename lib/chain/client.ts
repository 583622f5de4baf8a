import "server-only";
import { createPublicClient, createWalletClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { env } from "@/lib/env";

// Base mainnet in production, the local anvil chain (also chain id 8453) in dev and tests.
const transport = http(env.BASE_RPC_URL, { timeout: env.RPC_TIMEOUT_MS, retryCount: 0 });

export const publicClient = createPublicClient({ chain: base, transport });

export const relayerAccount = privateKeyToAccount(env.RELAYER_PRIVATE_KEY as `0x${string}`);

export const relayerClient = createWalletClient({ chain: base, transport, account: relayerAccount });
