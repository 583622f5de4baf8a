import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { ANVIL_DEV_ACCOUNTS, getDevAccount } from "@/lib/chain/constants";
import { devPaymentRefusal, isAnvilDevAccount } from "@/lib/chain/dev-wallet";

describe("who may sign a top-up on a dev deployment", () => {
  const buyer = getDevAccount("demoBuyer").address;

  it("a funded dev account, in any letter case", () => {
    for (const { address } of ANVIL_DEV_ACCOUNTS) {
      expect(isAnvilDevAccount(address.toLowerCase())).toBe(true);
      expect(devPaymentRefusal(address, 1n)).toBeNull();
    }
  });

  it("no other wallet, whatever it holds: the sentence says why and names the demo buyer", () => {
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    for (const held of [null, 0n, 1n, 10n ** 12n]) {
      const refusal = devPaymentRefusal(wallet, held)!;
      expect(refusal).toContain(`${wallet} is not one of the local chain's test accounts`);
      expect(refusal).toContain("reuses Base's chain id and USDC contract");
      expect(refusal).toContain(`such as the demo buyer ${buyer}`);
    }
  });

  it("not a dev account holding no test USDC, nor one whose balance could not be read", () => {
    expect(devPaymentRefusal(ANVIL_DEV_ACCOUNTS[4].address, 0n)).toContain("holds no test USDC on the local chain");
    expect(devPaymentRefusal(ANVIL_DEV_ACCOUNTS[4].address, 0n)).toContain(buyer);
    // The demo buyer itself, drained, is pointed at another account.
    expect(devPaymentRefusal(buyer, 0n)).toContain(`such as ${ANVIL_DEV_ACCOUNTS[0].address}`);
    expect(devPaymentRefusal(ANVIL_DEV_ACCOUNTS[4].address, null)).toContain("Could not read");
  });
});
