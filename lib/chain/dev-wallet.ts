import { isAddressEqual, type Address } from "viem";
import { ANVIL_DEV_ACCOUNTS, getDevAccount } from "./constants";

/**
 * Which wallet may sign a top-up for a dev deployment, and the one sentence that says why another may not.
 *
 * The local chain is anvil dressed as Base: chain id 8453, Circle's FiatToken at the real Base USDC address, the same
 * EIP-712 domain. A top-up authorization signed for it is therefore one Base mainnet accepts too, until its
 * validBefore. On a dev deployment the dashboard and the agent CLI ask only anvil's dev accounts to sign (their keys
 * are public, so nobody keeps real money on them), and only while they hold test USDC there; any other wallet might
 * be someone's real one. Fail closed: a balance that could not be read refuses too.
 */

/** Whether `address` is one of anvil's well-known dev accounts (public keys, funded with test USDC by the local chain). */
export function isAnvilDevAccount(address: string): boolean {
  return ANVIL_DEV_ACCOUNTS.some((account) => isAddressEqual(account.address, address as Address));
}

const DEV_CHAIN = "this dev chain reuses Base's chain id and USDC contract, so a payment signed for it is valid on Base too";

/**
 * null when `wallet` may sign a top-up on a dev deployment; else the sentence saying why not and which wallet to use.
 * `localUsdcMicros` is what the wallet holds on the dev chain, null when it could not be read.
 */
export function devPaymentRefusal(wallet: Address, localUsdcMicros: bigint | null): string | null {
  const instead = suggestedDevAccount(wallet);
  if (!isAnvilDevAccount(wallet)) {
    return `${wallet} is not one of the local chain's test accounts, and ${DEV_CHAIN}: pay from a funded dev account instead, such as the demo buyer ${instead} (npm run dev prints its key).`;
  }
  if (localUsdcMicros === null) {
    return `Could not read ${wallet}'s test USDC on the local chain, and ${DEV_CHAIN}, so svc signs nothing it has not checked: make sure the local chain is running (npm run dev starts it), then try again.`;
  }
  if (localUsdcMicros === 0n) {
    return `${wallet} holds no test USDC on the local chain (${DEV_CHAIN}): pay from a funded dev account instead, such as ${instead} (npm run dev prints its key).`;
  }
  return null;
}

function suggestedDevAccount(wallet: Address): Address {
  const buyer = getDevAccount("demoBuyer").address;
  return isAddressEqual(buyer, wallet) ? ANVIL_DEV_ACCOUNTS[0].address : buyer;
}
