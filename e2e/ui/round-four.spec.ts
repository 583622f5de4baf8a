import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { getAddress } from "viem";
import { platformAccounts, usdcBalance, usdcTransfers } from "../fixtures/chain";
import { expect, test } from "../fixtures/index";
import { usdTextToMicros } from "../fixtures/money";
import { deviceOf, VIEWPORTS } from "../fixtures/pages";

/**
 * Issue 38: a payment's state asked from the server, never guessed from a network error; and the dashboard's round-four
 * fixes, at both widths, with the in-process test wallet.
 */
const DIR = "test-results/screenshots";

async function seriousAxeViolations(page: Page, label: string): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${label}: ${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(" | ")}`);
}

for (const viewport of VIEWPORTS) {
  test.describe(`${viewport.name} ${viewport.width}×${viewport.height}`, () => {
    test.use({ ...deviceOf(viewport), wallet: "buyer" });

    test("a top-up whose answer is lost after the signed payment was sent ends at Added, and offers no second payment", async ({
      signedInPage: page,
      context,
      account,
    }) => {
      const topUp = page.getByRole("form", { name: "Top up" });
      const available = page.getByRole("group", { name: "Available" });
      await expect(available).toContainText("$");
      const before = usdTextToMicros(await available.textContent());
      const walletBefore = await usdcBalance(account.address);

      // The signed payment reaches svc (which settles and credits it), but its answer never reaches the page, and the
      // device goes offline with it.
      const signed: string[] = [];
      await page.route("**/v1/x402/top-up", async (route) => {
        if (!route.request().headers()["payment-signature"]) return route.continue();
        signed.push(route.request().url());
        const answer = await route.fetch();
        expect(answer.status()).toBe(200);
        await context.setOffline(true);
        await route.abort("internetdisconnected");
      });
      await topUp.getByLabel("Amount (USD)").fill("6");
      await topUp.getByRole("button", { name: "Top up $6.00" }).click();

      const checking = topUp.getByRole("status").filter({ hasText: "Checking your top-up of $6.00" });
      await expect(checking).toBeVisible();
      await expect(checking).toContainText("Don't pay again");
      await expect(topUp.getByRole("alert")).toHaveCount(0);
      await expect(topUp.getByRole("button", { name: /^Top up/ })).toBeDisabled();
      await page.screenshot({ path: `${DIR}/top-up-checking-${viewport.name}.png`, fullPage: true });

      // A reload while still offline is impossible; back online, the form asks svc by the authorization's nonce.
      await context.setOffline(false);
      const added = topUp.getByRole("status").filter({ hasText: "Added $6.00 to your balance" });
      await expect(added).toBeVisible();
      await expect(topUp.getByLabel("Amount (USD)")).toHaveValue("");
      await expect(topUp.getByRole("button", { name: /^Top up/ })).toBeDisabled();
      await expect.poll(async () => usdTextToMicros(await available.textContent())).toBe(before + 6_000_000n);
      const hash = (await added.getByLabel("Transaction hash", { exact: true }).textContent()) as `0x${string}`;
      expect(await usdcTransfers(hash)).toContainEqual({
        from: getAddress(account.address),
        to: getAddress(platformAccounts().treasury),
        value: 6_000_000n,
      });
      expect(await usdcBalance(account.address)).toBe(walletBefore - 6_000_000n);
      expect(await seriousAxeViolations(page, "/dashboard top-up added after a lost answer")).toEqual([]);

      // A reload neither asks again nor offers the amount again: the answer was final and is forgotten.
      await page.reload();
      await expect(page.getByRole("form", { name: "Top up" }).getByText(/^Paying from/)).toBeVisible();
      await expect(page.getByRole("form", { name: "Top up" }).getByText(/Checking your top-up/)).toHaveCount(0);
      expect(signed).toHaveLength(1);
    });

    test("a top-up whose answer was lost is still checked after a reload, never offered again before svc answers", async ({
      signedInPage: page,
    }) => {
      const topUp = page.getByRole("form", { name: "Top up" });
      // The answer is lost and the page closed before svc could be asked: the nonce kept in localStorage survives.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      await page.route("**/v1/x402/top-up", async (route) => {
        if (!route.request().headers()["payment-signature"]) return route.continue();
        await route.fetch();
        await route.abort("connectionreset");
      });
      await page.route("**/v1/x402/top-up/0x*", async (route) => {
        await released;
        await route.continue();
      });
      await topUp.getByLabel("Amount (USD)").fill("3");
      await topUp.getByRole("button", { name: "Top up $3.00" }).click();
      await expect(topUp.getByRole("status").filter({ hasText: "Checking your top-up of $3.00" })).toBeVisible();

      await page.reload();
      const again = page.getByRole("form", { name: "Top up" });
      await expect(again.getByRole("status").filter({ hasText: "Checking your top-up of $3.00" })).toBeVisible();
      await expect(again.getByRole("button", { name: /^Top up/ })).toBeDisabled();
      release();
      await expect(again.getByRole("status").filter({ hasText: "Added $3.00 to your balance" })).toBeVisible();
      await expect(again.getByRole("button", { name: /^Top up/ })).toBeDisabled();
    });
  });
}
