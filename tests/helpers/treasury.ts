/** The run's treasury (tests/setup/global.ts generates it, as a dev install generates its own) as a wallet. */
import { createTestClient, createWalletClient, getAddress, http } from "viem";
import { base } from "viem/chains";
import { env } from "@/lib/env";

export const treasuryAddress = getAddress(env.TREASURY_ADDRESS);

/**
 * A wallet sending as the treasury through anvil's impersonation, as the local chain's setup approves the relayer:
 * anvil picks its nonce, so test files sending from it in parallel cannot race each other, and no test needs its key.
 */
export async function treasuryWallet() {
  const transport = http(env.BASE_RPC_URL);
  await createTestClient({ mode: "anvil", chain: base, transport }).impersonateAccount({ address: treasuryAddress });
  return createWalletClient({ account: treasuryAddress, chain: base, transport });
}
