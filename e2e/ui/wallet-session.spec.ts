import AxeBuilder from "@axe-core/playwright";
import type { Page, Request, Route } from "@playwright/test";
import { createWalletClient, erc20Abi, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";
import { TEST_WALLET_ACCOUNT_KEY, TEST_WALLET_CHANGED_EVENT, TEST_WALLET_REJECT_SIGN_IN_KEY } from "../../lib/browser/test-wallet-storage";
import { ANVIL_DEV_ACCOUNTS, BASE_USDC_ADDRESS } from "../../lib/chain/constants";
import { usdcBalance } from "../fixtures/chain";
import { expect, test } from "../fixtures/index";
import { APP_ORIGIN, E2E_WALLETS, RPC_URL } from "../fixtures/stack";
import { connectTestWallet, signInThroughUi, useTestWallet } from "../fixtures/wallet";
import { deviceOf, VIEWPORTS } from "../fixtures/pages";

/**
 * Issue 28, items 2-5 and two of 11: the page follows the wallet and the session as they change under it, and money
 * that moves out of sight has a voice. Both widths, with the in-process test wallet.
 *
 * Wallets: the buyer (4) for most; dev account 8 (the local USDC admin, which transacts normally and no other spec
 * signs in with) as "the other account" and as the wallet holding only $2.00.
 */
const OTHER = 8;
const DIR = "test-results/screenshots";

const tabs = (page: Page) => page.getByRole("navigation", { name: "Dashboard" });
const short = (address: string) => `${address.slice(0, 6)}…${address.slice(-4)}`;

/** The user switches account in the wallet (the test wallet then announces it, as an extension does). */
async function switchWalletAccount(page: Page, index: number) {
  await page.evaluate(
    ([key, event, i]) => {
      window.localStorage.setItem(key, String(i));
      window.dispatchEvent(new CustomEvent(event));
    },
    [TEST_WALLET_ACCOUNT_KEY, TEST_WALLET_CHANGED_EVENT, index] as const,
  );
}

/** Ends this browser's session on the server, as another tab's sign-out (or an expiry) would. */
async function endSessionOnServer(page: Page) {
  const res = await page.context().request.post(`${APP_ORIGIN}/auth/logout`, { headers: { origin: APP_ORIGIN } });
  expect(res.status()).toBeLessThan(300);
}

async function seriousAxeViolations(page: Page, label: string): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${label}: ${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(" | ")}`);
}

/** Holds the top-up POSTs that match `which` until released; the others pass. */
async function holdTopUp(page: Page, which: (request: Request) => boolean) {
  let resolveHeld!: (route: Route) => void;
  const held = new Promise<Route>((resolve) => (resolveHeld = resolve));
  await page.route("**/v1/x402/top-up", async (route) => {
    if (which(route.request())) resolveHeld(route);
    else await route.continue();
  });
  return held;
}

/** Leaves exactly `micros` USDC in a dev account's wallet (the rest goes to the demo buyer's wallet). */
async function leaveUsdc(index: number, micros: bigint) {
  const account = privateKeyToAccount(ANVIL_DEV_ACCOUNTS[index].privateKey);
  const balance = await usdcBalance(account.address);
  if (balance === micros) return;
  expect(balance).toBeGreaterThan(micros);
  const client = createWalletClient({ account, chain: { ...base, rpcUrls: { default: { http: [RPC_URL] } } }, transport: http(RPC_URL) });
  await client.writeContract({
    address: BASE_USDC_ADDRESS,
    abi: erc20Abi,
    functionName: "transfer",
    args: [ANVIL_DEV_ACCOUNTS[3].address, balance - micros],
  });
  await expect.poll(() => usdcBalance(account.address)).toBe(micros);
}

/** Sends `micros` USDC to a dev account from dev account 3 (where leaveUsdc sends the rest). */
async function giveUsdc(index: number, micros: bigint) {
  const from = privateKeyToAccount(ANVIL_DEV_ACCOUNTS[3].privateKey);
  const before = await usdcBalance(ANVIL_DEV_ACCOUNTS[index].address);
  const client = createWalletClient({
    account: from,
    chain: { ...base, rpcUrls: { default: { http: [RPC_URL] } } },
    transport: http(RPC_URL),
  });
  await client.writeContract({
    address: BASE_USDC_ADDRESS,
    abi: erc20Abi,
    functionName: "transfer",
    args: [ANVIL_DEV_ACCOUNTS[index].address, micros],
  });
  await expect.poll(() => usdcBalance(ANVIL_DEV_ACCOUNTS[index].address)).toBe(before + micros);
}

/** The top-up POSTs that carried a signed payment. */
function collectSignedTopUps(page: Page): string[] {
  const signed: string[] = [];
  page.on("request", (request) => {
    if (request.url().endsWith("/v1/x402/top-up") && request.headers()["payment-signature"]) signed.push(request.url());
  });
  return signed;
}

for (const viewport of VIEWPORTS) {
  test.describe(`${viewport.name} ${viewport.width}×${viewport.height}`, () => {
    test.use({
      ...deviceOf(viewport),
      wallet: "buyer",
    });

    test("3 a wallet that switches account: money forms stop, never show the old address, and offer the one fix", async ({
      signedInPage: page,
      account,
    }) => {
      const other = ANVIL_DEV_ACCOUNTS[OTHER].address;
      const topUp = page.getByRole("form", { name: "Top up" });
      await expect(topUp.getByText(`Paying from ${account.address}`)).toBeVisible();

      await switchWalletAccount(page, OTHER);
      await expect(topUp.getByRole("status").filter({ hasText: "Your wallet changed accounts" })).toContainText(
        `signed in as ${short(account.address)}, but your wallet is now on ${short(other)}`,
      );
      await expect(topUp.getByText("Paying from")).toHaveCount(0);
      await expect(topUp.getByRole("button", { name: /^Top up/ })).toBeDisabled();
      await page.screenshot({ path: `${DIR}/wallet-switched-${viewport.name}.png`, fullPage: true });
      expect(await seriousAxeViolations(page, "/dashboard wallet switched")).toEqual([]);

      // The withdraw form stops too (client-side navigation: the wallet keeps the switched account).
      await page.getByRole("banner").getByRole("link", { name: "Supply", exact: true }).click();
      await page.getByRole("navigation", { name: "Supply" }).getByRole("link", { name: "Earnings" }).click();
      const withdraw = page.getByRole("form", { name: "Withdraw" });
      await expect(withdraw.getByRole("status").filter({ hasText: "Your wallet changed accounts" })).toBeVisible();
      await page.getByRole("banner").getByRole("link", { name: "Dashboard", exact: true }).click();

      // The one action: sign in as the wallet's new account; the form then pays from it.
      await topUp.getByRole("button", { name: `Sign in as ${short(other)}` }).click();
      await expect(page.getByRole("button", { name: /^Account 0x/ })).toContainText(short(other));
      await expect(topUp.getByText(`Paying from ${other}`)).toBeVisible();
      await expect(topUp.getByText("Your wallet changed accounts")).toHaveCount(0);
    });

    test("4 a session ended on the server: signed-out in place, input kept, dialogs wait, Sign in again resumes", async ({
      signedInPage: page,
    }) => {
      const topUp = page.getByRole("form", { name: "Top up" });
      await topUp.getByLabel("Amount (USD)").fill("7.5");
      await endSessionOnServer(page);
      await topUp.getByRole("button", { name: "Top up $7.50" }).click();

      // The page says so at once, header included, without a reload and without "Try again".
      const banner = page.getByRole("banner");
      await expect(banner.getByRole("button", { name: "Sign in again" })).toBeVisible();
      await expect(banner.getByRole("button", { name: /^Account 0x/ })).toHaveCount(0);
      const notice = page.getByRole("main").getByRole("status").filter({ hasText: "You were signed out" });
      await expect(notice).toBeVisible();
      await expect(page.getByRole("button", { name: "Try again" })).toHaveCount(0);
      await expect(page.getByText("Your session has ended")).toHaveCount(0);
      await expect(page.getByLabel("Amount (USD)")).toHaveValue("7.5");
      await expect(topUp.getByText("Top-up failed")).toHaveCount(0);
      await page.screenshot({ path: `${DIR}/session-ended-${viewport.name}.png`, fullPage: true });
      expect(await seriousAxeViolations(page, "/dashboard session ended")).toEqual([]);

      await notice.getByRole("button", { name: "Sign in again" }).click();
      await expect(banner.getByRole("button", { name: /^Account 0x/ })).toBeVisible();
      await expect(notice).toHaveCount(0);
      await expect(topUp.getByLabel("Amount (USD)")).toHaveValue("7.5");
      await expect(topUp.getByRole("button", { name: "Top up $7.50" })).toBeEnabled();

      // A dialog open when the session ends closes, cannot be reopened, and comes back as it was after signing in.
      await tabs(page).getByRole("link", { name: "API keys" }).click();
      await page
        .getByRole("button", { name: /^Create (key|your first key)$/ })
        .first()
        .click();
      const dialog = page.getByRole("dialog", { name: "Create an API key" });
      await dialog.getByLabel("Name").fill("after the session came back");
      await endSessionOnServer(page);
      await dialog.getByRole("button", { name: "Create key" }).click();
      await expect(notice).toBeVisible();
      await expect(dialog).toBeHidden();
      // The page under the notice is inert: out of reach of pointer, keyboard and assistive technology.
      await expect(page.locator("[data-paused]")).toHaveAttribute("inert", "");
      await notice.getByRole("button", { name: "Sign in again" }).click();
      await expect(dialog).toBeVisible();
      await expect(dialog.getByLabel("Name")).toHaveValue("after the session came back");
      await dialog.getByRole("button", { name: "Create key" }).click();
      await expect(page.getByRole("dialog", { name: "Your new API key" })).toBeVisible();
    });

    test("5 navigation away during a top-up: the notification area says it is going, then that it is done", async ({
      signedInPage: page,
    }) => {
      const settle = holdTopUp(page, (request) => !!request.headers()["payment-signature"]);
      const topUp = page.getByRole("form", { name: "Top up" });
      await topUp.getByLabel("Amount (USD)").fill("3");
      await topUp.getByRole("button", { name: "Top up $3.00" }).click();
      const held = await settle;

      await tabs(page).getByRole("link", { name: "API keys" }).click();
      const notifications = page.getByRole("region", { name: "Notifications" });
      await expect(notifications.getByText("Top-up of $3.00 in progress…")).toBeVisible();
      await held.continue();
      const done = notifications.getByRole("status").filter({ hasText: "Top-up done: added $3.00" });
      await expect(done).toBeVisible();
      await expect(notifications.getByText("in progress")).toHaveCount(0);
      await page.screenshot({ path: `${DIR}/top-up-notification-${viewport.name}.png` });
      await done.getByRole("button", { name: "Dismiss" }).click();
      await expect(done).toHaveCount(0);

      // On the page, a finished top-up resets the form: the same amount is not offered again.
      await page.unroute("**/v1/x402/top-up");
      await tabs(page).getByRole("link", { name: "Overview" }).click();
      await topUp.getByLabel("Amount (USD)").fill("2");
      await topUp.getByRole("button", { name: "Top up $2.00" }).click();
      await expect(topUp.getByRole("status").filter({ hasText: "Added $2.00 to your balance" })).toBeVisible();
      await expect(topUp.getByLabel("Amount (USD)")).toHaveValue("");
      await expect(topUp.getByRole("button", { name: /^Top up/ })).toBeDisabled();
    });

    test("5 going offline: the form says so, a top-up caught mid-way is cancelled, and reconnecting signs nothing", async ({
      signedInPage: page,
      context,
    }) => {
      const topUp = page.getByRole("form", { name: "Top up" });
      const submit = topUp.getByRole("button", { name: /^Top up/ });
      await context.setOffline(true);
      await expect(topUp.getByRole("status").filter({ hasText: "You're offline" })).toBeVisible();
      await expect(submit).toBeDisabled();
      await context.setOffline(false);
      await expect(submit).toBeEnabled();

      const signed: string[] = [];
      page.on("request", (request) => {
        if (request.url().includes("/v1/x402/top-up") && request.headers()["payment-signature"]) signed.push(request.url());
      });
      const terms = holdTopUp(page, (request) => !request.headers()["payment-signature"]);
      await topUp.getByLabel("Amount (USD)").fill("4");
      await topUp.getByRole("button", { name: "Top up $4.00" }).click();
      const held = await terms;
      await context.setOffline(true);
      await expect(topUp.getByRole("status").filter({ hasText: "You're offline" })).toContainText("Cancel it: nothing has been signed");
      await topUp.screenshot({ path: `${DIR}/top-up-offline-${viewport.name}.png` });
      await topUp.getByRole("button", { name: "Cancel top-up" }).click();
      await expect(topUp.getByRole("status").filter({ hasText: "Top-up cancelled" })).toBeVisible();
      await held.abort().catch(() => undefined);

      await context.setOffline(false);
      await expect(topUp.getByText(/^Paying from/)).toBeVisible();
      await expect(topUp.getByRole("button", { name: "Top up $4.00" })).toBeEnabled();
      await expect(topUp.getByRole("list", { name: "Top-up progress" })).toHaveCount(0);
      expect(signed).toEqual([]);
    });

    test("2 a wallet holding less than the amount: the form warns, offers what it holds, and asks for no signature", async ({ page }) => {
      await leaveUsdc(OTHER, 2_000_000n);
      await useTestWallet(page, OTHER);
      await signInThroughUi(page);
      const topUp = page.getByRole("form", { name: "Top up" });
      await expect(topUp.getByText(/^Paying from 0x.* · holds \$2\.00 USDC$/)).toBeVisible();

      const warning = topUp.getByRole("status").filter({ hasText: "Not enough USDC in your wallet" });
      await expect(warning).toContainText("less than $20.00");
      await expect(topUp.getByRole("button", { name: "Top up $20.00" })).toBeDisabled();
      await topUp.screenshot({ path: `${DIR}/top-up-short-${viewport.name}.png` });

      // Presets look pressed, not only say so.
      const five = topUp.getByRole("button", { name: "$5", exact: true });
      const twenty = topUp.getByRole("button", { name: "$20", exact: true });
      await five.click();
      await expect(five).toHaveAttribute("aria-pressed", "true");
      await expect(twenty).toHaveAttribute("aria-pressed", "false");
      const background = (b: typeof five) => b.evaluate((el) => getComputedStyle(el).backgroundColor);
      expect(await background(five)).not.toBe(await background(twenty));
      await expect(warning).toContainText("less than $5.00");

      await warning.getByRole("button", { name: "Top up $2.00 instead" }).click();
      await expect(topUp.getByLabel("Amount (USD)")).toHaveValue("2");
      await expect(warning).toHaveCount(0);
      await expect(topUp.getByRole("button", { name: "Top up $2.00" })).toBeEnabled();
      expect(await seriousAxeViolations(page, "/dashboard wallet short")).toEqual([]);
    });

    test("2 a wallet drained after the form read it: said once, as the warning, never also as a failure", async ({ page }) => {
      await leaveUsdc(OTHER, 2_000_000n);
      await useTestWallet(page, OTHER);
      await signInThroughUi(page);
      const topUp = page.getByRole("form", { name: "Top up" });
      await expect(topUp.getByText(/^Paying from 0x.* · holds \$2\.00 USDC$/)).toBeVisible();
      await topUp.getByLabel("Amount (USD)").fill("2");
      const pay = topUp.getByRole("button", { name: "Top up $2.00" });
      await expect(pay).toBeEnabled();
      // The wallet spends elsewhere before the payment is signed: the form still shows what it read.
      await leaveUsdc(OTHER, 1_000_000n);
      const signed = collectSignedTopUps(page);
      await pay.click();

      const warning = topUp.getByRole("status").filter({ hasText: "Not enough USDC in your wallet" });
      await expect(warning).toContainText("Your wallet holds $1.00 USDC, less than $2.00");
      await expect(topUp.getByText("Top-up failed")).toHaveCount(0);
      await expect(topUp.getByRole("alert")).toHaveCount(0);
      await expect(topUp.getByText(/holds \$1\.00 USDC, less than/)).toHaveCount(1);
      await expect(pay).toBeDisabled();
      expect(signed).toEqual([]);
      // Put back what the next width's tests expect to find (the drained USDC went to dev account 3).
      await giveUsdc(OTHER, 1_000_000n);
    });

    test("11 a rejected sign-in signature puts focus back on Sign in", async ({ page }) => {
      await useTestWallet(page, E2E_WALLETS.buyer);
      await page.addInitScript((key) => window.localStorage.setItem(key, "1"), TEST_WALLET_REJECT_SIGN_IN_KEY);
      await page.goto("/dashboard");
      await connectTestWallet(page);
      const main = page.getByRole("main");
      const signIn = main.getByRole("button", { name: "Sign in" });
      await signIn.click();
      await expect(main.getByRole("alert")).toContainText("You cancelled the request in your wallet.");
      await expect(signIn).toBeFocused();
    });
  });
}
