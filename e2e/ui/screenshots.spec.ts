import { mkdirSync } from "node:fs";
import { ANVIL_DEV_ACCOUNTS } from "../../lib/chain/constants";
import { bearerClient, SvcSession } from "../fixtures/api";
import { expect, hydratingPage, test } from "../fixtures/index";
import { E2E_WALLETS, UPSTREAM_URL } from "../fixtures/stack";
import { VIEWPORTS } from "../fixtures/pages";

/**
 * Every main page at desktop and phone width, saved under test-results/screenshots/ for a person to look at
 * (nothing overlapping, nothing unstyled). The showcase wallet is given some history first so pages are not empty.
 */
const DIR = "test-results/screenshots";

test.use({ wallet: "showcase" });

test("main pages at desktop and phone widths", async ({ browser, page }) => {
  test.setTimeout(420_000);
  mkdirSync(DIR, { recursive: true });

  const showcase = await SvcSession.signIn(ANVIL_DEV_ACCOUNTS[E2E_WALLETS.showcase]);
  await showcase.topUp("12.5");
  const { key } = await showcase.createKey({ name: "showcase", max_price_cents: 95, spend_limit: "10" });
  await showcase.createKey({ name: "old laptop" }).then(({ id }) => showcase.ok("DELETE", `/v1/account/api-keys/${id}`));
  const client = bearerClient(key);
  for (const content of ["Summarise the x402 protocol", "Write a haiku about order books"]) {
    await client.chat.completions.create({ model: "llama-3.3-70b", messages: [{ role: "user", content }] });
  }
  await showcase.postOffer({
    upstream_base_url: UPSTREAM_URL,
    upstream_api_key: "ref-upstream-dev-key",
    models: ["qwen3-235b", "mistral-31-24b"],
    price_cents: 85,
    daily_capacity: "40",
  });

  const shoot = async (target: typeof page, name: string, viewport: (typeof VIEWPORTS)[number]) => {
    await target.setViewportSize({ width: viewport.width, height: viewport.height });
    await target.screenshot({ path: `${DIR}/${name}-${viewport.name}.png`, fullPage: true });
  };

  // Public pages, signed out, in a fresh context.
  const visitor = hydratingPage(await browser.newPage());
  for (const viewport of VIEWPORTS) {
    await visitor.setViewportSize({ width: viewport.width, height: viewport.height });
    await visitor.goto("/market");
    await expect(visitor.getByRole("table", { name: "Models" })).toBeVisible();
    await shoot(visitor, "market", viewport);
    await visitor.goto("/market/llama-3.3-70b");
    await expect(visitor.getByRole("table", { name: "Order book for llama-3.3-70b" })).toBeVisible();
    await expect(visitor.getByRole("img", { name: /Price and volume history/ })).toBeVisible();
    await shoot(visitor, "order-book", viewport);
    await visitor.goto("/dashboard");
    await expect(visitor.getByRole("heading", { name: "Sign in with your wallet" })).toBeVisible();
    await expect(visitor.getByRole("main").getByRole("button", { name: "Connect wallet" })).toBeEnabled();
    await shoot(visitor, "sign-in", viewport);
    await visitor.getByRole("main").getByRole("button", { name: "Connect wallet" }).click();
    await expect(visitor.getByRole("dialog", { name: "Connect a wallet" })).toBeVisible();
    await visitor.screenshot({ path: `${DIR}/connect-dialog-${viewport.name}.png` });
    await visitor.keyboard.press("Escape");
    for (const [path, name] of [
      ["/docs", "docs"],
      ["/docs/reference", "docs-reference"],
    ] as const) {
      await visitor.goto(path);
      await expect(visitor.getByRole("heading", { level: 1 })).toBeVisible();
      // The reference is long: its first screen is what matters here.
      if (name === "docs-reference") await visitor.screenshot({ path: `${DIR}/${name}-${viewport.name}.png` });
      else await shoot(visitor, name, viewport);
    }
    await visitor.goto("/no-such-page");
    await shoot(visitor, "not-found", viewport);
  }
  await visitor.close();

  // Signed-in pages.
  const { useTestWallet, signInThroughUi } = await import("../fixtures/wallet");
  await useTestWallet(page, E2E_WALLETS.showcase);
  await signInThroughUi(page);
  const pages = [
    { path: "/dashboard", name: "dashboard", ready: () => page.getByRole("group", { name: "Available" }) },
    {
      path: "/dashboard/keys",
      name: "api-keys",
      ready: () => page.getByRole("table", { name: "API keys" }).or(page.getByRole("list", { name: "API keys" })),
    },
    {
      path: "/dashboard/usage",
      name: "usage",
      ready: () => page.getByRole("table", { name: "Requests" }).or(page.getByRole("list", { name: "Requests" })),
    },
    {
      path: "/dashboard/history",
      name: "history",
      ready: () => page.getByRole("table", { name: "Money history" }).or(page.getByRole("list", { name: "Money history" })),
    },
    { path: "/supply", name: "supply", ready: () => page.getByRole("article").first() },
    { path: "/supply/earnings", name: "earnings", ready: () => page.getByRole("group", { name: "Available to withdraw" }) },
  ];
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize({ width: viewport.width, height: viewport.height });
    for (const p of pages) {
      await page.goto(p.path);
      await expect(p.ready()).toBeVisible();
      await expect(page.getByRole("status", { name: /^Loading/ })).toHaveCount(0);
      await shoot(page, p.name, viewport);
    }
  }
});
