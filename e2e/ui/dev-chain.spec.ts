import type { Page } from "@playwright/test";
import { createWalletClient, erc20Abi, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { ANVIL_DEV_ACCOUNTS, BASE_USDC_ADDRESS, getDevAccount } from "../../lib/chain/constants";
import { chainClient, usdcBalance } from "../fixtures/chain";
import { expect, test } from "../fixtures/index";
import { INJECTED_WALLET_NAME, installInjectedWallet } from "../fixtures/injected-wallet";
import { E2E_WALLETS, RPC_URL } from "../fixtures/stack";

/**
 * Issue 34, finding 6: the e2e stack is a dev deployment (its chain reuses Base's chain id, the real USDC address
 * and its EIP-712 domain), so a top-up a wallet signs there is a valid payment on Base mainnet too. The dashboard
 * asks only the dev chain's funded test accounts to sign; a wallet of its own (as a user's real MetaMask would be)
 * is told why and which wallet to use, and never asked, even when it holds test USDC on the local chain.
 */
const DIR = "test-results/screenshots";

/** Signs in through the Connect dialog with the injected EIP-6963 wallet (as a MetaMask user would). */
async function signInWithInjectedWallet(page: Page) {
  await page.goto("/dashboard");
  const main = page.getByRole("main");
  await main.getByRole("button", { name: "Connect wallet" }).click();
  await page
    .getByRole("dialog", { name: "Connect a wallet" })
    .getByRole("button", { name: new RegExp(INJECTED_WALLET_NAME) })
    .click();
  await main.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Dashboard", level: 1 })).toBeVisible();
}

test("a wallet that is not one of the dev chain's accounts is never asked to sign a top-up, and is told which to use", async ({ page }) => {
  // A wallet of its own, holding test USDC on the local chain (sent from the agent's dev account).
  const ownKey = generatePrivateKey();
  const own = privateKeyToAccount(ownKey);
  const funder = createWalletClient({
    account: privateKeyToAccount(ANVIL_DEV_ACCOUNTS[E2E_WALLETS.agent].privateKey),
    chain: { ...base, rpcUrls: { default: { http: [RPC_URL] } } },
    transport: http(RPC_URL),
  });
  const hash = await funder.writeContract({
    address: BASE_USDC_ADDRESS,
    abi: erc20Abi,
    functionName: "transfer",
    args: [own.address, 50_000_000n],
  });
  await chainClient.waitForTransactionReceipt({ hash });

  const wallet = await installInjectedWallet(page, { privateKey: ownKey });
  const topUpRequests: string[] = [];
  page.on("request", (request) => {
    if (request.url().includes("/v1/x402/top-up")) topUpRequests.push(request.method());
  });
  await signInWithInjectedWallet(page);

  const topUp = page.getByRole("form", { name: "Top up" });
  const refusal = topUp.getByRole("status").filter({ hasText: "Use a dev account to pay on this dev deployment" });
  await expect(refusal).toContainText(`${own.address} is not one of the local chain's test accounts`);
  await expect(refusal).toContainText("reuses Base's chain id and USDC contract, so a payment signed for it is valid on Base too");
  await expect(refusal).toContainText(`such as the demo buyer ${getDevAccount("demoBuyer").address}`);
  await expect(topUp.getByRole("button", { name: "Top up $20.00" })).toBeDisabled();
  await expect(topUp.getByText("Not enough USDC in your wallet")).toHaveCount(0);
  await topUp.screenshot({ path: `${DIR}/top-up-not-a-dev-wallet.png` });

  // Submitting from the keyboard asks for nothing either.
  await topUp.getByLabel("Amount (USD)").fill("5");
  await topUp.getByLabel("Amount (USD)").press("Enter");
  await expect(topUp.getByRole("button", { name: "Top up $5.00" })).toBeDisabled();

  // Only the sign-in message was signed; no payment was requested, signed or sent.
  expect(wallet.signatures.map((s) => s.method)).toEqual(["personal_sign"]);
  expect(topUpRequests).toEqual([]);
  expect(await usdcBalance(own.address)).toBe(50_000_000n);
});
