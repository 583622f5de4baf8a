import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { getAddress } from "viem";
import { formatUsd } from "../../components/ui/format";
import { TEST_WALLET_REJECT_PAYMENT_KEY } from "../../lib/browser/test-wallet-storage";
import { ANVIL_DEV_ACCOUNTS } from "../../lib/chain/constants";
import { bearerClient, SvcSession } from "../fixtures/api";
import { platformAccounts, usdcBalance, usdcTransfers } from "../fixtures/chain";
import { expect, test } from "../fixtures/index";
import { usdTextToMicros } from "../fixtures/money";
import { deviceOf, SIGNED_IN_PAGES, VIEWPORTS } from "../fixtures/pages";
import { APP_ORIGIN, E2E_WALLETS, UPSTREAM_URL } from "../fixtures/stack";

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

/** A key of the buyer with a long name that spent something today and whose daily limit was then lowered below that. */
async function keyAtItsLimit(): Promise<{ name: string; id: string }> {
  const session = await SvcSession.signIn(ANVIL_DEV_ACCOUNTS[E2E_WALLETS.buyer]);
  await session.topUp("1");
  const name = `round four agent key with a name longer than a phone card ${Date.now().toString(36)}`;
  const key = await session.createKey({ name, spend_limit: "5", limit_reset: "daily" });
  await bearerClient(key.key).chat.completions.create({ model: "llama-3.3-70b", messages: [{ role: "user", content: "Spend a little" }] });
  await session.ok("PATCH", `/v1/account/api-keys/${key.id}`, { spend_limit: "0.000001" });
  return { name, id: key.id };
}

test.describe("desktop 1280×800", () => {
  test.use({ viewport: { width: 1280, height: 800 }, wallet: "buyer" });

  test("the keys table fits: every key's Edit and Revoke in view without scrolling sideways; a key at its limit says when it resets", async ({
    signedInPage: page,
  }) => {
    const { name } = await keyAtItsLimit();
    await page.goto("/dashboard/keys");
    const table = page.getByRole("table", { name: "API keys" });
    const row = table.getByRole("row").filter({ hasText: name.slice(0, 30) });
    await expect(row).toBeVisible();
    await expect(page.getByTestId("scroll-hint")).toHaveCount(0);
    const tableBox = (await table.boundingBox())!;
    expect(tableBox.x + tableBox.width).toBeLessThanOrEqual(1280);
    for (const action of await table.getByRole("button", { name: /^(Edit|Revoke) / }).all()) {
      const box = (await action.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(1280);
    }
    await expect(row.getByText("Limit reached")).toBeVisible();
    await expect(row).toContainText(/resets \w{3} \d{1,2}, .*UTC/);
    await expect(row.getByText("Active", { exact: true })).toHaveCount(0);
    await page.screenshot({ path: `${DIR}/keys-1280.png`, fullPage: true });
    expect(await seriousAxeViolations(page, "/dashboard/keys 1280")).toEqual([]);
  });
});

test.describe("phone 390×844", () => {
  test.use({ ...deviceOf(VIEWPORTS[1]), wallet: "buyer" });

  test("a key's card shows its whole name and its limit", async ({ signedInPage: page }) => {
    const { name } = await keyAtItsLimit();
    await page.goto("/dashboard/keys");
    const card = page.getByRole("list", { name: "API keys" }).getByRole("listitem").filter({ hasText: name });
    const heading = card.getByRole("heading");
    await expect(heading).toHaveText(name);
    // Not cut: the whole name is laid out inside the card (wrapped if it must), none of it hidden by an ellipsis.
    expect(await heading.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await expect(card.getByText("Limit reached")).toBeVisible();
    await card.screenshot({ path: `${DIR}/key-card-phone.png` });
  });
});

for (const viewport of VIEWPORTS) {
  test.describe(`glossary ${viewport.name}`, () => {
    test.use({ ...deviceOf(viewport) });

    test("a glossary term opens by a tap or a click, and closes by another, by Escape and by a tap outside", async ({ page }) => {
      await page.goto("/market/llama-3.3-70b");
      const vwap = page.getByRole("button", { name: "What is VWAP?" });
      const definition = page.getByRole("definition").filter({ hasText: "volume-weighted average price" });
      await expect(definition).toBeHidden();
      const press = () => (viewport.touch ? vwap.tap() : vwap.click());
      await press();
      await expect(definition).toBeVisible();
      await expect(vwap).toHaveAttribute("aria-expanded", "true");
      await page.screenshot({ path: `${DIR}/glossary-${viewport.name}.png` });
      await press();
      await expect(definition).toBeHidden();
      await press();
      await expect(definition).toBeVisible();
      const heading = page.getByRole("heading", { level: 1 });
      await (viewport.touch ? heading.tap() : heading.click());
      await expect(definition).toBeHidden();
      await press();
      await expect(definition).toBeVisible();
      await page.keyboard.press("Escape");
      await expect(definition).toBeHidden();
      if (!viewport.touch) await expect(vwap).toBeFocused();
    });
  });
}

test.describe("offer form", () => {
  test.use({ wallet: "supplier" });

  test("the data policy starts unset, must be chosen before posting, and is unset again after", async ({ signedInPage: page }) => {
    await page.goto("/supply");
    const form = page.getByRole("region", { name: "Post an offer" });
    for (const radio of await form.getByRole("radio").all()) await expect(radio).not.toBeChecked();
    const posts: string[] = [];
    page.on("request", (request) => {
      if (request.method() === "POST" && request.url().endsWith("/v1/supply/offers")) posts.push(request.url());
    });
    await form.getByLabel("Upstream base URL").fill(UPSTREAM_URL);
    await form.getByLabel("Upstream API key").fill("ref-upstream-dev-key");
    await form.getByRole("checkbox", { name: /mistral-31-24b/ }).check();
    await form.getByLabel("Price").fill("149");
    await form.getByRole("button", { name: "Post offer" }).click();
    await expect(form.getByText("Say whether your upstream keeps prompts or answers.")).toBeVisible();
    await expect(form.getByText("Say whether your upstream trains on them.")).toBeVisible();
    expect(posts).toEqual([]);

    await form.getByRole("radio", { name: "No, it keeps none" }).check();
    await form.getByRole("radio", { name: "No training" }).check();
    await expect(form.getByText("Say whether your upstream keeps prompts or answers.")).toHaveCount(0);
    await form.getByRole("button", { name: "Post offer" }).click();
    await expect(form.getByRole("status").filter({ hasText: "Upstream check passed" })).toBeVisible();
    expect(posts).toHaveLength(1);
    const offer = page.getByRole("article", { name: "Offer 149¢ per diem, mistral-31-24b" }).first();
    await expect(offer).toContainText("keeps no prompts");
    for (const radio of await form.getByRole("radio").all()) await expect(radio).not.toBeChecked();
    await expect(form.getByText("Say whether your upstream keeps prompts or answers.")).toHaveCount(0);

    // A name buyers recognise, beside the public id on the provider table.
    const name = `E2E Supply ${Date.now().toString(36)}`;
    const naming = page.getByRole("region", { name: "Your supplier name" });
    await naming.getByLabel("Supplier name").fill(name);
    await naming.getByRole("button", { name: "Save name" }).click();
    await expect(naming.getByRole("status").filter({ hasText: `Buyers now see you as ${name}.` })).toBeVisible();
    await page.goto("/market/mistral-31-24b");
    await expect(page.getByRole("table", { name: "Providers for mistral-31-24b" }).getByText(name).first()).toBeVisible();
  });
});

test.describe("focus order", () => {
  test.use({ wallet: "buyer" });

  test("Tab reaches the top-up field before any figure's exact-value button", async ({ signedInPage: page }) => {
    const field = page.getByRole("form", { name: "Top up" }).getByLabel("Amount (USD)");
    await expect(field).toBeVisible();
    await page.locator("body").focus();
    const passed: string[] = [];
    for (let i = 0; i < 30 && !(await field.evaluate((el) => el === document.activeElement)); i++) {
      await page.keyboard.press("Tab");
      passed.push(await page.evaluate(() => document.activeElement?.textContent?.trim() ?? ""));
    }
    await expect(field).toBeFocused();
    expect(passed.filter((text) => /\$\d/.test(text))).toEqual([]);
  });
});

for (const viewport of VIEWPORTS) {
  test.describe(`usage ${viewport.name}`, () => {
    test.use({ ...deviceOf(viewport), wallet: "buyer" });

    test("a Usage row shows the id the buyer was given and opens the request by it; a resp_ id is found too", async ({
      signedInPage: page,
    }) => {
      const session = await SvcSession.signIn(ANVIL_DEV_ACCOUNTS[E2E_WALLETS.buyer]);
      await session.topUp("1");
      const { key } = await session.createKey({ name: `usage detail ${viewport.name}` });
      const client = bearerClient(key);
      const completion = await client.chat.completions.create({
        model: "llama-3.3-70b",
        messages: [{ role: "user", content: "A request to find by its id" }],
      });
      const charge = (completion.usage as unknown as { cost_details: { charge: string } }).cost_details.charge;
      const response = await client.responses.create({ model: "llama-3.3-70b", input: "And one through the Responses API" });
      expect(response.id).toMatch(/^resp_/);

      await page.goto("/dashboard/usage");
      const requests = page.getByRole("region", { name: "Requests" });
      await requests.getByRole("button", { name: `Open request ${completion.id}` }).click();
      const dialog = page.getByRole("dialog", { name: "Request" });
      await expect(dialog).toContainText(completion.id);
      await expect(dialog).toContainText("llama-3.3-70b");
      await expect(dialog).toContainText(/sup_[0-9a-f]{24}/);
      await expect(dialog).toContainText(formatUsd(charge));
      await expect(dialog).toContainText(`usage detail ${viewport.name}`);
      await expect(dialog.getByText("Ledger entry")).toBeVisible();
      await page.screenshot({ path: `${DIR}/usage-detail-${viewport.name}.png` });
      expect(await seriousAxeViolations(page, `/dashboard/usage detail ${viewport.name}`)).toEqual([]);
      await dialog.getByRole("button", { name: "Close" }).click();
      await expect(dialog).toBeHidden();

      // The id a Responses API client holds finds the same record.
      await requests.getByLabel("Find a request by id").fill(response.id);
      await requests.getByRole("button", { name: "Find" }).click();
      await expect(dialog).toContainText(response.id.replace(/^resp_/, "chatcmpl-"));
      await expect(dialog).toContainText("llama-3.3-70b");
      await dialog.getByRole("button", { name: "Close" }).click();
      await requests.getByLabel("Find a request by id").fill("not-an-id");
      await requests.getByRole("button", { name: "Find" }).click();
      await expect(requests.getByText(/Paste the id an answer carried/)).toBeVisible();
    });
  });
}

test.describe("lows", () => {
  test.use({ wallet: "buyer" });

  test("the dashboard's pages load and hydrate without an error in the console", async ({ signedInPage: page }) => {
    const errors: string[] = [];
    page.on("console", (message) => {
      // A refused fetch is logged by the browser itself (the session probe's 401 on a signed-out check): not the app's error.
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) errors.push(message.text());
    });
    page.on("pageerror", (error) => errors.push(error.message));
    for (const path of SIGNED_IN_PAGES) {
      await page.goto(path);
      await expect(page.getByRole("main")).toBeVisible();
    }
    expect(errors).toEqual([]);
  });

  test("a declined payment signature is no red failure, nothing is sent, and focus stays on the form", async ({ signedInPage: page }) => {
    const topUp = page.getByRole("form", { name: "Top up" });
    const signed: string[] = [];
    page.on("request", (request) => {
      if (request.url().includes("/v1/x402/top-up") && request.headers()["payment-signature"]) signed.push(request.url());
    });
    await page.evaluate((key) => window.localStorage.setItem(key, "1"), TEST_WALLET_REJECT_PAYMENT_KEY);
    try {
      await topUp.getByLabel("Amount (USD)").fill("2");
      await topUp.getByRole("button", { name: "Top up $2.00" }).click();
      await expect(topUp.getByRole("status").filter({ hasText: "Signature declined" })).toContainText("nothing was signed or charged");
      await expect(topUp.getByRole("alert")).toHaveCount(0);
      await expect(topUp.getByRole("button", { name: "Top up $2.00" })).toBeFocused();
      expect(signed).toEqual([]);
    } finally {
      await page.evaluate((key) => window.localStorage.removeItem(key), TEST_WALLET_REJECT_PAYMENT_KEY);
    }
  });

  test("an edit dialog keeps what was typed when its submit meets an ended session, and saves it after signing in again", async ({
    signedInPage: page,
  }) => {
    const session = await SvcSession.signIn(ANVIL_DEV_ACCOUNTS[E2E_WALLETS.buyer]);
    const key = await session.createKey({ name: `edit me ${Date.now().toString(36)}` });
    await page.goto("/dashboard/keys");
    const row = page.getByRole("table", { name: "API keys" }).getByRole("row").filter({ hasText: key.name });
    await row.getByRole("button", { name: `Edit ${key.name}` }).click();
    const dialog = page.getByRole("dialog", { name: `Edit “${key.name}”` });
    const renamed = `${key.name} renamed`;
    await dialog.getByLabel("Name").fill(renamed);
    const res = await page.context().request.post(`${APP_ORIGIN}/auth/logout`, { headers: { origin: APP_ORIGIN } });
    expect(res.status()).toBeLessThan(300);
    await dialog.getByRole("button", { name: "Save" }).click();
    const notice = page.getByRole("main").getByRole("status").filter({ hasText: "You were signed out" });
    await expect(notice).toBeVisible();
    await expect(dialog).toBeHidden();
    await notice.getByRole("button", { name: "Sign in again" }).click();
    await expect(dialog).toBeVisible();
    await expect(dialog.getByLabel("Name")).toHaveValue(renamed);
    await dialog.getByRole("button", { name: "Save" }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByRole("table", { name: "API keys" }).getByRole("row").filter({ hasText: renamed })).toBeVisible();
  });
});

test.describe("withdrawal", () => {
  test.use({ wallet: "supplier" });

  test("a withdrawal whose answer is lost is asked about by its key and ends at Sent, made once", async ({ signedInPage: page, agent }) => {
    const supplier = await SvcSession.signIn(ANVIL_DEV_ACCOUNTS[E2E_WALLETS.supplier]);
    // The cheapest offer on the book, so the agent's completion earns this supplier something to withdraw.
    await supplier.postOffer({
      upstream_base_url: UPSTREAM_URL,
      upstream_api_key: "ref-upstream-dev-key",
      models: ["mistral-31-24b"],
      price_cents: 1,
      daily_capacity: "10",
    });
    await agent.client.chat.completions.create({
      model: "mistral-31-24b",
      messages: [{ role: "user", content: "Earn the supplier something to withdraw." }],
    });
    const before = (await supplier.ok<{ data: unknown[] }>("GET", "/v1/supply/withdrawals")).data.length;

    await page.goto("/supply/earnings");
    const form = page.getByRole("form", { name: "Withdraw" });
    await page.route("**/v1/supply/withdrawals", async (route) => {
      if (route.request().method() !== "POST") return route.continue();
      await route.fetch();
      await route.abort("connectionreset");
    });
    await form.getByRole("button", { name: "Max" }).click();
    await form.getByRole("button", { name: /^Withdraw \$/ }).click();
    const sent = form.getByRole("status").filter({ hasText: /^Sent \$/ });
    await expect(sent).toBeVisible();
    await expect(form.getByRole("alert")).toHaveCount(0);
    await expect(form.getByRole("button", { name: /^Withdraw \$/ })).toHaveCount(0);
    const after = (await supplier.ok<{ data: { idempotency_key: string | null }[] }>("GET", "/v1/supply/withdrawals")).data;
    expect(after.length).toBe(before + 1);
    expect(after[0].idempotency_key).toMatch(/^wd-/);
  });
});
