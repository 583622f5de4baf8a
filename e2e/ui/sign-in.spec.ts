import { expect, test } from "../fixtures/index";
import { E2E_WALLETS } from "../fixtures/stack";
import { connectTestWallet, useTestWallet } from "../fixtures/wallet";

test.use({ wallet: "buyer" });

test("a wallet on the wrong network is asked to switch to Base, signs in with SIWE, stays signed in, and signs out", async ({
  page,
  account,
}) => {
  await useTestWallet(page, E2E_WALLETS.buyer, { chainId: 1 });
  await page.goto("/dashboard");
  const main = page.getByRole("main");
  await expect(main.getByRole("heading", { name: "Sign in with your wallet" })).toBeVisible();

  await connectTestWallet(page);

  await expect(page.getByRole("status").filter({ hasText: "Wrong network" })).toContainText("Your wallet is on Ethereum");
  await expect(main.getByRole("button", { name: "Sign in" })).toHaveCount(0);
  await main.getByRole("button", { name: "Switch to Base" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Wrong network" })).toHaveCount(0);

  await main.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Dashboard", level: 1 })).toBeVisible();
  const accountButton = page.getByRole("button", { name: `Account ${account.address.slice(0, 6)}…${account.address.slice(-4)}` });
  await expect(accountButton).toBeVisible();

  // The session is a server-side cookie: a reload keeps it.
  await page.reload();
  await expect(page.getByRole("heading", { name: "Dashboard", level: 1 })).toBeVisible();

  await accountButton.click();
  await expect(page.getByTestId("account-address")).toHaveText(account.address);
  await expect(page.getByRole("menuitem", { name: "Dashboard" })).toBeFocused();
  await page.keyboard.press("ArrowUp");
  await expect(page.getByRole("menuitem", { name: "Sign out" })).toBeFocused();
  await page.getByRole("menuitem", { name: "Sign out" }).click();
  await expect(main.getByRole("heading", { name: "Sign in with your wallet" })).toBeVisible();
  await expect(page.getByRole("banner").getByRole("button", { name: "Connect wallet" })).toBeEnabled();
  // Signing out does not reopen the Connect dialog.
  await expect(page.getByRole("dialog", { name: "Connect a wallet" })).toHaveCount(0);

  // Signed out server-side too: the account API refuses the old cookie.
  const res = await page.request.get("/v1/account");
  expect(res.status()).toBe(401);
});
