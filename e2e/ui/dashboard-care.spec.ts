import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { ANVIL_DEV_ACCOUNTS } from "../../lib/chain/constants";
import { SvcSession } from "../fixtures/api";
import { expect, hydratingPage, test } from "../fixtures/index";
import { INJECTED_WALLET_NAME, installInjectedWallet } from "../fixtures/injected-wallet";
import { usdTextToMicros } from "../fixtures/money";
import { E2E_WALLETS, UPSTREAM_URL } from "../fixtures/stack";
import { signInThroughUi, useTestWallet } from "../fixtures/wallet";
import { PUBLIC_PAGES, SIGNED_IN_PAGES, VIEWPORTS } from "../fixtures/pages";

/**
 * Issue 16, "the dashboard as careful as the money under it": one test per item of the issue, each run at
 * desktop (1440×900) and phone (390×844) width in Chromium.
 */

/** Signs in through the Connect dialog with the injected EIP-6963 wallet (as a MetaMask user would). */
async function signInWithInjectedWallet(page: Page) {
  await page.goto("/dashboard");
  const main = page.getByRole("main");
  await main.getByRole("button", { name: "Connect wallet" }).click();
  await page
    .getByRole("dialog", { name: "Connect a wallet" })
    .getByRole("button", { name: new RegExp(INJECTED_WALLET_NAME) })
    .click();
  // Focus moves on to the next step's action instead of dropping to <body>.
  await expect(main.getByRole("button", { name: "Sign in" })).toBeFocused();
  await main.getByRole("button", { name: "Sign in" }).click();
  const heading = page.getByRole("heading", { name: "Dashboard", level: 1 });
  await expect(heading).toBeVisible();
  await expect(heading).toBeFocused();
}

/** Nothing wider than the viewport: the document does not scroll sideways. */
async function expectNoSidewaysScroll(page: Page, path: string) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  expect(scrollWidth, `${path} is ${scrollWidth}px wide in a ${innerWidth}px viewport`).toBeLessThanOrEqual(innerWidth);
}

/** Serious and critical WCAG 2.2 A/AA violations axe finds on the page as it is now, described for the failure message. */
async function seriousAxeViolations(page: Page, label: string): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  return serious.map(
    (v) =>
      `${label}: ${v.id} (${v.impact}): ${v.nodes
        .map((n) => n.target.join(" "))
        .slice(0, 4)
        .join(" | ")}`,
  );
}

for (const viewport of VIEWPORTS) {
  test.describe(`${viewport.name} ${viewport.width}×${viewport.height}`, () => {
    test.use({ viewport: { width: viewport.width, height: viewport.height }, wallet: "buyer" });

    test("1 money: an injected EIP-6963 wallet signs in and tops up an amount whose every digit is shown and signed", async ({ page }) => {
      const wallet = await installInjectedWallet(page, E2E_WALLETS.buyer);
      await signInWithInjectedWallet(page);
      const available = page.getByRole("group", { name: "Available" });
      await expect(available).toContainText("$");
      const before = usdTextToMicros(await available.textContent());

      await page.getByLabel("Amount (USD)").fill("1.234567");
      await expect(page.getByText("sign a transfer of exactly $1.234567 USDC")).toBeVisible();
      await page.getByRole("button", { name: "Top up $1.234567" }).click();
      const done = page.getByRole("status").filter({ hasText: "Added $1.234567 to your balance" });
      await expect(done).toBeVisible();
      await expect.poll(async () => usdTextToMicros(await available.textContent())).toBe(before + 1_234_567n);

      // What the wallet signed is what the button said: 1,234,567 micro-USDC.
      const signed = wallet.signatures.find((s) => s.method === "eth_signTypedData_v4")!.payload as { message: { value: string | number } };
      expect(BigInt(signed.message.value)).toBe(1_234_567n);
      expect(wallet.signatures[0].method).toBe("personal_sign");

      // Every balance shows every digit it has (no "$1.23" for 1.234567), and two decimals when that is exact.
      await page.getByLabel("Amount (USD)").fill("2");
      await expect(page.getByRole("button", { name: "Top up $2.00" })).toBeVisible();
    });

    test("1 money: the withdrawal form checks against the exact amount available and states its bounds up front", async ({
      page,
      agent,
    }) => {
      // Earn something first: the cheapest offer on mistral serves the agent's request.
      const supplier = await SvcSession.signIn(ANVIL_DEV_ACCOUNTS[E2E_WALLETS.supplier]);
      const cheap = await supplier.postOffer({
        upstream_base_url: UPSTREAM_URL,
        upstream_api_key: "ref-upstream-dev-key",
        models: ["mistral-31-24b"],
        price_cents: 20,
        daily_capacity: "1",
      });
      await agent.client.chat.completions.create({
        model: "mistral-31-24b",
        messages: [{ role: "user", content: "Earn the supplier a few micro-dollars" }],
      });
      await supplier.ok("DELETE", `/v1/supply/offers/${cheap.id}`);

      await useTestWallet(page, E2E_WALLETS.supplier);
      await signInThroughUi(page);
      await page.goto("/supply/earnings");
      const stat = page.getByRole("group", { name: "Available to withdraw" });
      await expect(stat).toContainText("$");
      await expect.poll(async () => usdTextToMicros(await stat.textContent())).toBeGreaterThan(0n);
      const availableText = await stat.textContent();
      const available = usdTextToMicros(availableText);
      const form = page.getByRole("form", { name: "Withdraw" });
      // The bounds are shown before anything is typed, exactly.
      // The stat shows cents with the exact amount beside it for screen readers; the form's bounds are exact.
      const shown = /\$[\d,]+\.\d+/.exec(/exactly (\$[\d,.]+)/.exec(availableText!)?.[1] ?? availableText!)![0];
      await expect(form.getByLabel("Amount (USD)")).toHaveAccessibleDescription(
        new RegExp(`Between \\$0\\.000001 and ${shown.replace(/[$.]/g, "\\$&")}`),
      );
      // One micro-dollar more than available is refused with the exact figure.
      const over = available + 1n;
      await form.getByLabel("Amount (USD)").fill(`${over / 1_000_000n}.${(over % 1_000_000n).toString().padStart(6, "0")}`);
      await form.getByRole("button", { name: /^Withdraw/ }).click();
      await expect(form.getByText(`At most ${shown}.`)).toBeVisible();
    });

    test("2 keys: a name is required and distinct, long names stay inside the table and dialogs, and no page scrolls sideways", async ({
      page,
    }) => {
      const showcase = await SvcSession.signIn(ANVIL_DEV_ACCOUNTS[E2E_WALLETS.showcase]);
      const long = `${"a-very-long-key-name-without-spaces-".repeat(3)}${viewport.name}`.slice(0, 100);
      await showcase.createKey({ name: long, max_price_cents: 95, spend_limit: "10" });
      // Many offers on the supply page.
      for (let i = 0; i < 4; i++) {
        await showcase.postOffer({
          upstream_base_url: UPSTREAM_URL,
          upstream_api_key: "ref-upstream-dev-key",
          models: ["qwen3-235b"],
          price_cents: 140 + i,
          daily_capacity: "5",
        });
      }
      await useTestWallet(page, E2E_WALLETS.showcase);
      await signInThroughUi(page);

      await page.goto("/dashboard/keys");
      // A table row on a desktop, a card on a phone (issue 28).
      const phone = viewport.name === "phone";
      const row = (
        phone
          ? page.getByRole("list", { name: "API keys" }).getByRole("listitem")
          : page.getByRole("table", { name: "API keys" }).getByRole("row")
      )
        .filter({ hasText: long.slice(0, 20) })
        .first();
      // Revoke is reachable (in view once scrolled to) and says which key.
      const revoke = row.getByRole("button", { name: new RegExp(`^Revoke ${long}`) });
      await revoke.scrollIntoViewIfNeeded();
      await expect(revoke).toBeInViewport();
      await expect(phone ? row.getByRole("heading") : row.getByRole("cell").first()).toHaveAttribute("title", long);
      // The prefix is there at every width.
      if (phone) await expect(row).toContainText(/svc_\w+…/);
      else
        await expect(page.getByRole("table", { name: "API keys" }).getByRole("columnheader", { name: "Key", exact: true })).toBeVisible();

      // The name is required (no silent "default") and prefilled with a distinct one; its max length is the API's.
      await page.getByRole("button", { name: "Create key" }).first().click();
      const create = page.getByRole("dialog", { name: "Create an API key" });
      const name = create.getByLabel("Name");
      await expect(name).toHaveValue(/^key-\d+$/);
      await expect(name).toHaveAttribute("maxlength", "100");
      await name.fill("");
      await create.getByRole("button", { name: "Create key" }).click();
      await expect(create.getByText("Give the key a name")).toBeVisible();
      await create.getByRole("button", { name: "Cancel" }).click();

      for (const path of SIGNED_IN_PAGES) {
        await page.goto(path);
        await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
        await expect(page.getByRole("status", { name: /^Loading/ })).toHaveCount(0);
        await expectNoSidewaysScroll(page, path);
      }
      await page.goto("/supply");
      await expect(page.getByRole("article").nth(3)).toBeVisible();
      await expectNoSidewaysScroll(page, "/supply with many offers");
      for (const path of PUBLIC_PAGES) {
        await page.goto(path);
        await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
        await expect(page.getByRole("status", { name: /^Loading/ })).toHaveCount(0); // what it fetches is laid out
        await expectNoSidewaysScroll(page, path);
      }
    });

    test("3 accessibility: axe finds no serious or critical violation on any page, signed out or in; skip link, focus ring, menu keys", async ({
      page,
      browser,
    }) => {
      test.setTimeout(240_000);
      const visitorContext = await browser.newContext({ viewport: { width: viewport.width, height: viewport.height } });
      const visitor = hydratingPage(await visitorContext.newPage());
      const violations: string[] = [];
      for (const path of PUBLIC_PAGES) {
        await visitor.goto(path);
        await expect(visitor.getByRole("heading", { level: 1 }).first()).toBeVisible();
        // Hydrated (the wallet button is enabled then), so axe sees the page a person uses.
        await expect(visitor.getByRole("banner").getByRole("button", { name: "Connect wallet" })).toBeEnabled();
        violations.push(...(await seriousAxeViolations(visitor, `${path} signed out`)));
      }
      // The skip link is the first stop and lands on the content.
      await visitor.goto("/");
      await visitor.keyboard.press("Tab");
      const skip = visitor.getByRole("link", { name: "Skip to content" });
      await expect(skip).toBeFocused();
      // The focus ring is a visible outline in a colour that is not the page's white.
      const outline = await skip.evaluate((el) => getComputedStyle(el).outlineColor);
      expect(outline).not.toBe("rgb(255, 255, 255)");
      await visitor.keyboard.press("Enter");
      await expect(visitor).toHaveURL(/#main$/);
      await visitorContext.close();

      await useTestWallet(page, E2E_WALLETS.buyer);
      await signInThroughUi(page);
      for (const path of SIGNED_IN_PAGES) {
        await page.goto(path);
        await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
        await expect(page.getByRole("status", { name: /^Loading/ })).toHaveCount(0);
        violations.push(...(await seriousAxeViolations(page, `${path} signed in`)));
      }
      expect(violations).toEqual([]);

      // A primary button's focus ring is not white on white.
      await page.goto("/dashboard");
      const topUp = page.getByRole("button", { name: /^Top up/ });
      await page.keyboard.press("Tab");
      await topUp.focus();
      // (Polled: transition-colors fades the outline in over 150 ms.)
      await expect
        .poll(() =>
          topUp.evaluate((el) => ({
            visible: el.matches(":focus-visible"),
            style: getComputedStyle(el).outlineStyle,
            color: getComputedStyle(el).outlineColor,
          })),
        )
        .toEqual({ visible: true, style: "solid", color: "rgb(29, 78, 216)" });

      // The account menu follows the menu button pattern.
      const account = page.getByRole("button", { name: /^Account 0x/ });
      await account.focus();
      await page.keyboard.press("ArrowDown");
      await expect(page.getByRole("menuitem", { name: "Dashboard" })).toBeFocused();
      await page.keyboard.press("ArrowDown");
      await expect(page.getByRole("menuitem", { name: "Supply" })).toBeFocused();
      await page.keyboard.press("End");
      await expect(page.getByRole("menuitem", { name: "Sign out" })).toBeFocused();
      await page.keyboard.press("ArrowDown");
      await expect(page.getByRole("menuitem", { name: "Dashboard" })).toBeFocused();
      await page.keyboard.press("Escape");
      await expect(page.getByRole("menu")).toHaveCount(0);
      await expect(account).toBeFocused();
    });

    test("4 phones without an extension: the Connect dialog says what to do instead of asking for an extension", async ({ page }) => {
      await page.goto("/dashboard");
      await page.getByRole("main").getByRole("button", { name: "Connect wallet" }).click();
      const dialog = page.getByRole("dialog", { name: "Connect a wallet" });
      const help = dialog.getByRole("status").filter({ hasText: "No wallet in this browser" });
      await expect(help).toContainText("open this page in your wallet app");
      await expect(help).toContainText("Coinbase Wallet");
      await expect(help.getByRole("button", { name: "Copy this page's link" })).toBeVisible();
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await expect(dialog).toBeHidden();

      // With a wallet announced (EIP-6963), it is offered first and the help is not shown.
      const other = hydratingPage(await page.context().newPage());
      await installInjectedWallet(other, E2E_WALLETS.buyer);
      await other.goto("/dashboard");
      await other.getByRole("main").getByRole("button", { name: "Connect wallet" }).click();
      const withWallet = other.getByRole("dialog", { name: "Connect a wallet" });
      await expect(withWallet.getByRole("button").first()).toContainText(INJECTED_WALLET_NAME);
      await expect(withWallet.getByText("No wallet in this browser")).toHaveCount(0);
      await other.close();
    });

    test("5 forms: reset after posting, revalidate on edit, warn before saving, guard the shown-once key, sign-out stays closed", async ({
      page,
    }) => {
      await useTestWallet(page, E2E_WALLETS.buyer);
      await signInThroughUi(page);

      // The max price warns before saving.
      await page.goto("/dashboard");
      const maxPrice = page.getByRole("textbox", { name: "Max price" });
      await maxPrice.fill("5000");
      await expect(page.getByRole("status").filter({ hasText: "Above the list price" })).toContainText("4900% above list");
      // Below every offer on the market: said before saving, with the price that would route.
      await maxPrice.fill("1");
      await expect(page.getByRole("status").filter({ hasText: "Nothing routes at this price" })).toContainText(
        /The cheapest offer is \d+¢/,
      );
      await maxPrice.fill("");

      // Escape on the shown-once key asks first.
      await page.goto("/dashboard/keys");
      await page.getByRole("button", { name: "Create key" }).first().click();
      await page.getByRole("dialog", { name: "Create an API key" }).getByRole("button", { name: "Create key" }).click();
      const reveal = page.getByRole("dialog", { name: "Your new API key" });
      await expect(reveal).toBeVisible();
      await page.keyboard.press("Escape");
      await expect(reveal).toBeVisible();
      await expect(reveal.getByRole("alert")).toContainText("Close without copying the key?");
      await expect(reveal.getByRole("button", { name: "Keep it open" })).toBeFocused();
      await reveal.getByRole("button", { name: "Close anyway" }).click();
      await expect(reveal).toBeHidden();

      // The offer form: a failed upstream check clears once the field is edited; a posted offer empties the form.
      await page.goto("/supply");
      const form = page.getByRole("region", { name: "Post an offer" });
      await form.getByLabel("Upstream base URL").fill("http://127.0.0.1:9/v1");
      await form.getByLabel("Upstream API key").fill("ref-upstream-dev-key");
      await form.getByRole("checkbox", { name: /mistral-31-24b/ }).check();
      await form.getByLabel("Price").fill("150");
      await form.getByRole("radio", { name: "No, it keeps none" }).check();
      await form.getByRole("radio", { name: "No training" }).check();
      await form.getByRole("button", { name: "Post offer" }).click();
      await expect(form.getByRole("alert").first()).toBeVisible();
      await form.getByLabel("Upstream base URL").fill(UPSTREAM_URL);
      await expect(form.getByRole("alert")).toHaveCount(0);
      await form.getByRole("button", { name: "Post offer" }).click();
      await expect(form.getByRole("status").filter({ hasText: "Upstream check passed" })).toBeVisible();
      await expect(form.getByLabel("Upstream base URL")).toHaveValue("");
      await expect(form.getByLabel("Upstream API key")).toHaveValue("");
      await expect(form.getByRole("checkbox", { name: /mistral-31-24b/ })).not.toBeChecked();
      // The data policy starts unset again: never the declared values of the last offer, nor "keeps and trains".
      for (const radio of await form.getByRole("radio").all()) await expect(radio).not.toBeChecked();

      // Editing capacity past the maximum says the maximum, not "more than 0".
      const offer = page.getByRole("article", { name: "Offer 150¢ per diem, mistral-31-24b" }).first();
      await offer.getByRole("button", { name: /^Edit offer/ }).click();
      const edit = page.getByRole("dialog", { name: "Edit offer" });
      await edit.getByLabel("Daily capacity").fill("99999999");
      await expect(edit.getByText("Capacity must be at most 1,000,000 diem per day.")).toBeVisible();
      await edit.getByRole("button", { name: "Cancel" }).click();
      await offer.getByRole("button", { name: /^Delist/ }).click();
      await page.getByRole("dialog", { name: "Delist this offer?" }).getByRole("button", { name: "Delist offer" }).click();
      await expect(offer).toHaveCount(0);

      // Sign out does not reopen the Connect dialog.
      await page.getByRole("button", { name: /^Account 0x/ }).click();
      await page.getByRole("menuitem", { name: "Sign out" }).click();
      await expect(page.getByRole("main").getByRole("heading", { name: "Sign in with your wallet" })).toBeVisible();
      await expect(page.getByRole("dialog", { name: "Connect a wallet" })).toHaveCount(0);
    });

    test("6 words: Delist for offers, a glossary on the terms, plurals, usage tokens explained", async ({ page, agent }) => {
      await agent.client.chat.completions.create({
        model: "llama-3.3-70b",
        messages: [{ role: "user", content: "A request for the usage page" }],
      });
      await page.goto("/market/llama-3.3-70b");
      const vwap = page.getByRole("button", { name: "What is VWAP?" });
      await vwap.focus();
      await page.keyboard.press("Enter");
      await expect(page.getByRole("definition").filter({ hasText: "volume-weighted average price" })).toBeVisible();
      await expect(vwap).toHaveAccessibleDescription(/volume-weighted average price/);
      await page.keyboard.press("Escape");
      await expect(page.getByRole("definition").filter({ hasText: "volume-weighted average price" })).toBeHidden();
      await expect(vwap).toBeFocused();
      await expect(page.getByText(/\b1 suppliers\b|\b1 offers\b/)).toHaveCount(0);

      await useTestWallet(page, E2E_WALLETS.agent);
      await signInThroughUi(page);
      await page.goto("/supply");
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      await expect(page.getByRole("button", { name: /^Withdraw/ })).toHaveCount(0);
      await page.goto("/dashboard/usage");
      await expect(page.getByText("Tokens are what the model's upstream reported")).toBeVisible();
      await expect(page.getByRole("button", { name: "Burn" }).first()).toBeVisible();
    });

    test("7 pictures: charts with axes and details, price history, depth scaled to the book, History with transactions, use this model", async ({
      page,
      agent,
    }) => {
      await agent.client.chat.completions.create({
        model: "llama-3.3-70b",
        messages: [{ role: "user", content: "A trade for the history" }],
      });

      await page.goto("/market/llama-3.3-70b");
      const history = page.getByRole("region", { name: "Price and volume history" });
      const chart = history.getByRole("img", { name: /Price and volume history for llama-3\.3-70b/ });
      await expect(chart).toBeVisible();
      await chart.focus();
      await page.keyboard.press("ArrowLeft");
      await expect(history.getByTestId("chart-detail")).toContainText(/UTC: (no trades|\$[\d.,]+ volume)/);
      // The axis carries values.
      await expect(chart.locator("text").filter({ hasText: "$" }).first()).toBeVisible();
      // The depth chart starts near the cheapest level, not at 0¢.
      const depth = page.getByRole("img", { name: /Depth chart for llama-3\.3-70b/ });
      const firstTick = await depth.locator("text").filter({ hasText: /¢$/ }).first().textContent();
      expect(Number(firstTick!.replace("¢", ""))).toBeGreaterThan(0);
      await depth.focus();
      await page.keyboard.press("ArrowRight");
      await expect(page.getByTestId("depth-detail")).toContainText(/At \d+¢ or less: [\d.,]+\sdiem available today/);
      const snippet = page.getByRole("region", { name: "Use this model" });
      await expect(snippet).toContainText('"model": "llama-3.3-70b"');
      await expect(snippet.getByRole("button", { name: "Copy curl" })).toBeVisible();

      // The agent's own dashboard: spend per day and per model, and its History with the top-up's transaction.
      await page.context().clearCookies();
      const agentPage = page;
      await useTestWallet(agentPage, E2E_WALLETS.agent);
      await signInThroughUi(agentPage);
      const spend = agentPage.getByRole("img", { name: /Spend per day/ });
      await expect(spend).toBeVisible();
      await spend.focus();
      await agentPage.keyboard.press("ArrowLeft");
      await expect(agentPage.getByTestId("chart-detail").first()).toContainText(/\$[\d.,]+ · \d+ requests?/);
      await expect(
        agentPage.getByRole("list", { name: "Spend per model" }).getByRole("listitem").filter({ hasText: "llama-3.3-70b" }),
      ).toBeVisible();

      await agentPage.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "History" }).click();
      // A table on a desktop, one card per entry on a phone (the day's requests grouped as "Spent").
      const ledger = agentPage.getByRole("table", { name: "Money history" }).or(agentPage.getByRole("list", { name: "Money history" }));
      const entries = ledger.getByRole(viewport.name === "phone" ? "listitem" : "row");
      const topUpRow = entries.filter({ hasText: "Top-up" }).first();
      await expect(topUpRow).toContainText("+$5.00");
      await expect(topUpRow.getByLabel(/^Transaction 0x[0-9a-f]{64}$/)).toBeVisible();
      await expect(entries.filter({ hasText: "Spent" }).first()).toContainText("−$");
      await agentPage.getByRole("button", { name: "Top-ups", exact: true }).click();
      await expect(entries.filter({ hasText: "Spent" })).toHaveCount(0);
      await expect(entries.filter({ hasText: "Top-up" }).first()).toBeVisible();
    });

    test("8 small: /market, a favicon, no 401 from /auth/session when anonymous, docs in pages with contents and search", async ({
      page,
    }) => {
      const sessionAnswers: number[] = [];
      page.on("response", (res) => {
        if (new URL(res.url()).pathname === "/auth/session") sessionAnswers.push(res.status());
      });
      const market = await page.goto("/market");
      expect(market?.status()).toBe(200);
      await expect(page.getByRole("table", { name: "Models" })).toBeVisible();
      await page.goto("/dashboard");
      await expect(page.getByRole("heading", { name: "Sign in with your wallet" })).toBeVisible();
      // The sign-in panel above shows only once the session query has settled (components/wallet/sign-in-gate.tsx):
      // a request it made has been answered by then, and its answer recorded, so there is nothing to wait for.
      await expect(page.getByRole("banner").getByRole("button", { name: "Connect wallet" })).toBeEnabled();
      expect(sessionAnswers).toEqual([]);

      const icon = await page.request.get("/icon.svg");
      expect(icon.status()).toBe(200);
      expect(await page.locator('link[rel="icon"]').first().getAttribute("href")).toContain("icon");

      await page.goto("/docs");
      await expect(page.getByRole("heading", { name: "Quick start", level: 1 })).toBeVisible();
      if (viewport.width < 1024) {
        await page.locator("summary").filter({ hasText: "Contents" }).click();
        await page.getByRole("navigation", { name: "Docs contents (phone)" }).getByRole("link", { name: "Errors" }).click();
      } else {
        await page.getByRole("navigation", { name: "Docs contents" }).getByRole("link", { name: "Errors" }).click();
      }
      await expect(page.getByRole("heading", { name: "Errors", level: 1 })).toBeVisible();
      await expect(page).toHaveURL(/\/docs\/errors$/);
      await page.getByRole("searchbox", { name: "Search the docs" }).fill("top-up");
      const results = page.getByRole("list", { name: "Search results" });
      await results.getByRole("link", { name: /POST \/v1\/x402\/top-up/ }).click();
      await expect(page).toHaveURL(/\/docs\/reference#op-/);
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      expect(height).toBeGreaterThan(0);
    });
  });
}
