import AxeBuilder from "@axe-core/playwright";
import type { Locator, Page } from "@playwright/test";
import { ANVIL_DEV_ACCOUNTS } from "../../lib/chain/constants";
import { bearerClient, SvcSession } from "../fixtures/api";
import { expect, hydratingPage, test } from "../fixtures/index";
import { UPSTREAM_URL } from "../fixtures/stack";
import { signInThroughUi, useTestWallet } from "../fixtures/wallet";
import { deviceOf, PUBLIC_PAGES, VIEWPORTS } from "../fixtures/pages";

/**
 * Issue 28 items 1 and 7, "phones and numbers", at desktop (1440×900) and phone (390×844, touch) width: the tables
 * that matter are one card per row on a phone (keys, requests), status and amount always in view; the number policy
 * of components/ui/format.ts (balances at cents with the exact value a hover or tap away, one number of decimals per
 * column, units that never wrap); the price levels show every column at 1440 px; no page scrolls sideways and axe
 * finds nothing serious on any page, signed out or in.
 *
 * Anvil dev account 9 is this spec's own wallet (no other spec uses it).
 */
const PHONES_WALLET = 9;
const SCREENSHOTS = "test-results/screenshots";

const SIGNED_IN_PAGES = [
  "/dashboard",
  "/dashboard/keys",
  "/dashboard/usage",
  "/dashboard/history",
  "/supply",
  "/supply/earnings",
  "/market",
  "/market/llama-3.3-70b",
  "/docs",
];

async function expectNoSidewaysScroll(page: Page, label: string) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.scrollingElement!.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  expect(scrollWidth, `${label} is ${scrollWidth}px wide in a ${innerWidth}px viewport`).toBeLessThanOrEqual(innerWidth);
}

async function seriousAxeViolations(page: Page, label: string): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${label}: ${v.id} (${v.impact}): ${v.nodes
          .map((n) => n.target.join(" "))
          .slice(0, 4)
          .join(" | ")}`,
    );
}

/** The element at the middle of `locator` is the locator itself or inside it: nothing (a sticky cell) covers it. */
async function expectUncovered(locator: Locator) {
  await locator.scrollIntoViewIfNeeded();
  const uncovered = await locator.evaluate((el) => {
    const box = el.getBoundingClientRect();
    const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    return top !== null && (el === top || el.contains(top));
  });
  expect(uncovered, "covered by another element").toBe(true);
}

/** Inside the viewport horizontally: shown without scrolling anything sideways. */
async function expectWithinWidth(page: Page, locator: Locator) {
  const box = (await locator.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(page.viewportSize()!.width);
}

/** A shown text as a literal in a RegExp (the visible figure and its screen-reader suffix may be read with a space between). */
const escape = (text: string) => text.replace(/[$.]/g, "\\$&");

/** "$0.000810" → 6: the decimals a shown dollar amount has. */
const decimalsOf = (text: string) => /\$[\d,]+\.(\d+)/.exec(text)![1].length;

/** Micros → "$1.23" rounded toward zero, and → every digit: the two faces of a balance. */
function centsAndExact(micros: bigint): { cents: string; exact: string } {
  const whole = (micros / 1_000_000n).toLocaleString("en-US");
  const fraction = (micros % 1_000_000n).toString().padStart(6, "0");
  let exact = fraction;
  while (exact.length > 2 && exact.endsWith("0")) exact = exact.slice(0, -1);
  return { cents: `$${whole}.${fraction.slice(0, 2)}`, exact: `$${whole}.${exact}` };
}

const LIVE = "phone-live-key";
const REVOKED = "phone-revoked-key";

/**
 * Once per run (a worker restarted after a failure finds the keys and seeds nothing again): a balance that is not
 * whole cents, a live key that made three requests on two models, a revoked key, an offer with fractional capacity.
 */
async function seed() {
  const session = await SvcSession.signIn(ANVIL_DEV_ACCOUNTS[PHONES_WALLET]);
  const keys = await session.ok<{ data: { name: string }[] }>("GET", "/v1/account/api-keys");
  if (!keys.data.some((k) => k.name === LIVE)) {
    await session.topUp("3.141592");
    const { key } = await session.createKey({ name: LIVE });
    const gone = await session.createKey({ name: REVOKED });
    await session.ok("DELETE", `/v1/account/api-keys/${gone.id}`);
    const client = bearerClient(key);
    for (const model of ["llama-3.3-70b", "mistral-31-24b", "llama-3.3-70b"]) {
      await client.chat.completions.create({ model, messages: [{ role: "user", content: `a request from a phone on ${model}` }] });
    }
    // An offer of its own, so the supply page has a card with capacity.
    await session.postOffer({
      upstream_base_url: UPSTREAM_URL,
      upstream_api_key: "ref-upstream-dev-key",
      models: ["qwen3-235b"],
      price_cents: 97,
      daily_capacity: "374.993664",
    });
  }
  return { session, live: LIVE, revoked: REVOKED };
}

for (const viewport of VIEWPORTS) {
  test.describe(`${viewport.name} ${viewport.width}×${viewport.height}`, () => {
    test.use(deviceOf(viewport));

    test("1 phones and 7 numbers: keys and requests as cards with status and amount in view, balances at cents with the exact value a tap away", async ({
      page,
    }) => {
      const { session, live, revoked } = await seed();
      const phone = viewport.name === "phone";
      await useTestWallet(page, PHONES_WALLET);
      await signInThroughUi(page);

      // The headline balance at cents, the exact amount in its title, read to screen readers, and shown on a tap.
      const account = await session.ok<{ available: string }>("GET", "/v1/account");
      const micros = BigInt(account.available.replace(".", ""));
      const { cents, exact } = centsAndExact(micros);
      expect(cents).not.toBe(exact); // the seeded balance is not whole cents
      await page.goto("/dashboard");
      const available = page.getByRole("group", { name: "Available" });
      const figure = available.getByRole("button");
      await expect(figure).toHaveAccessibleName(new RegExp(`^${escape(cents)} ?, exactly ${escape(exact)}$`));
      await expect(figure).toHaveAttribute("title", `Exactly ${exact}`);
      await expect(figure).toHaveAttribute("aria-pressed", "false");
      if (phone) await figure.tap();
      else await figure.click();
      await expect(figure).toHaveText(exact);
      await expect(figure).toHaveAttribute("aria-pressed", "true");
      await page.screenshot({ path: `${SCREENSHOTS}/phones-numbers-balance-${viewport.name}.png`, fullPage: true });

      // Keys: a card per key on a phone, a table row on a desktop; the status badge is in view and uncovered.
      await page.goto("/dashboard/keys");
      const keyRows = phone
        ? page.getByRole("list", { name: "API keys" }).getByRole("listitem")
        : page.getByRole("table", { name: "API keys" }).getByRole("row");
      if (phone) await expect(page.getByRole("table", { name: "API keys" })).toBeHidden();
      const liveRow = keyRows.filter({ hasText: live });
      const revokedRow = keyRows.filter({ hasText: revoked });
      // The status badge comes first in a row or card (a card also has the date it was revoked among its facts).
      const revokedBadge = revokedRow.getByText("Revoked", { exact: true }).first();
      await expect(liveRow.getByText("Active", { exact: true })).toBeVisible();
      await expect(revokedBadge).toBeVisible();
      await expectUncovered(liveRow.getByText("Active", { exact: true }));
      await expectUncovered(revokedBadge);
      await expectWithinWidth(page, revokedBadge);
      // A revoked key has no actions and looks revoked (greyed text), a live one can be revoked from its card or row.
      await expect(revokedRow.getByRole("button", { name: /^Revoke/ })).toHaveCount(0);
      await expect(liveRow.getByRole("button", { name: new RegExp(`^Revoke ${live}`) })).toBeVisible();
      const [liveColor, revokedColor] = await Promise.all(
        [liveRow, revokedRow].map((row) => row.evaluate((el) => getComputedStyle(el).color)),
      );
      expect(revokedColor).not.toBe(liveColor);
      if (phone) {
        // Its spend is on the card's face, beside the status.
        await expectWithinWidth(page, liveRow.getByText(/\$\d/).first());
      }
      await expectNoSidewaysScroll(page, "/dashboard/keys");
      await page.screenshot({ path: `${SCREENSHOTS}/phones-numbers-keys-${viewport.name}.png`, fullPage: true });

      // Requests: cost and latency of every request in view; one number of decimals down the cost column.
      await page.goto("/dashboard/usage");
      const requests = phone
        ? page.getByRole("list", { name: "Requests" }).getByRole("listitem")
        : page.getByRole("table", { name: "Requests" }).locator("tbody tr");
      await expect(requests).toHaveCount(3);
      const costs: string[] = [];
      for (const request of await requests.all()) {
        const cost = request.getByText(/^\$\d+\.\d+$/);
        const latency = request.getByText(/^[\d,]+\sms$/);
        await expect(cost).toBeVisible();
        await expect(latency).toBeVisible();
        await expectWithinWidth(page, cost);
        await expectWithinWidth(page, latency);
        costs.push((await cost.textContent())!);
      }
      expect(new Set(costs.map(decimalsOf)).size, `costs ${costs.join(", ")} share their decimals`).toBe(1);
      // Every cost is exact: the column has as many decimals as the most precise cost needs, so none is rounded.
      const usage = await session.ok<{ data: { cost: string }[] }>("GET", "/v1/account/usage?limit=10");
      const places = Math.max(2, ...usage.data.map((r) => r.cost.replace(/0+$/, "").split(".")[1]?.length ?? 0));
      expect(decimalsOf(costs[0])).toBe(places);
      await expectNoSidewaysScroll(page, "/dashboard/usage");
      await page.screenshot({ path: `${SCREENSHOTS}/phones-numbers-usage-${viewport.name}.png`, fullPage: true });

      // Units never wrap: no number stands before "diem" or "ms" with a breakable space in these parts.
      for (const [path, part] of [
        ["/dashboard/usage", (p: Page) => p.getByRole("region", { name: "Requests" })],
        ["/supply", (p: Page) => p.getByRole("region", { name: "Your offers" })],
        ["/market/llama-3.3-70b", (p: Page) => p.getByRole("region", { name: "Price levels" })],
      ] as const) {
        await page.goto(path);
        await expect(part(page)).toBeVisible();
        await expect(page.getByRole("status", { name: /^Loading/ })).toHaveCount(0);
        // What is shown (innerText): a glossary tooltip's prose ("1 diem buys…") is hidden until asked for.
        const text = await part(page).evaluate((el) => (el as HTMLElement).innerText);
        expect(text, `${path}: a number and its unit joined by an ordinary space`).not.toMatch(/\d (diem|ms)\b/);
      }
      // The offer's capacity reads at two places, its exact value a tap away, on one line.
      await page.goto("/supply");
      const offer = page.getByRole("article", { name: /Offer 97¢ per diem/ });
      const capacity = offer.getByRole("button", { name: /^374\.99\sdiem ?, exactly 374\.99\d*\sdiem$/ }).first();
      await expect(capacity).toBeVisible();
      const { height, lineHeight } = await capacity.evaluate((el) => ({
        height: el.getBoundingClientRect().height,
        lineHeight: parseFloat(getComputedStyle(el).lineHeight),
      }));
      expect(height, "the capacity and its unit on one line").toBeLessThan(lineHeight * 1.5);
      await expectNoSidewaysScroll(page, "/supply");
      await page.screenshot({ path: `${SCREENSHOTS}/phones-numbers-supply-${viewport.name}.png`, fullPage: true });
    });

    test("7 numbers: the price levels show every column at a desktop width, one number of decimals per column", async ({ page }) => {
      await seed();
      await page.goto("/market/llama-3.3-70b");
      const levels = page.getByRole("region", { name: "Price levels" });
      const table = levels.getByRole("table", { name: "Order book for llama-3.3-70b" });
      await expect(table).toBeVisible();
      if (viewport.name === "desktop") {
        await expect(table.getByRole("columnheader", { name: "Offers" })).toBeVisible();
        await expect(levels.getByTestId("scroll-hint")).toHaveCount(0);
      }
      const capacities = await table.locator("tbody tr td:nth-child(2)").allTextContents();
      expect(capacities.length).toBeGreaterThan(0);
      const places = capacities.map((c) => /\.(\d+)/.exec(c)?.[1].length ?? 0);
      expect(new Set(places).size, `capacities ${capacities.join(" | ")}`).toBe(1);
      await expectNoSidewaysScroll(page, "/market/llama-3.3-70b");
      await page.screenshot({ path: `${SCREENSHOTS}/phones-numbers-order-book-${viewport.name}.png`, fullPage: true });
    });

    test("every page, signed out and in: nothing scrolls sideways and axe finds nothing serious or critical", async ({ page, browser }) => {
      test.setTimeout(360_000);
      await seed();
      const violations: string[] = [];
      const visitorContext = await browser.newContext(deviceOf(viewport));
      const visitor = hydratingPage(await visitorContext.newPage());
      for (const path of PUBLIC_PAGES) {
        await visitor.goto(path);
        await expect(visitor.getByRole("heading", { level: 1 }).first()).toBeVisible();
        await expect(visitor.getByRole("status", { name: /^Loading/ })).toHaveCount(0);
        await expectNoSidewaysScroll(visitor, `${path} signed out`);
        violations.push(...(await seriousAxeViolations(visitor, `${path} signed out`)));
      }
      await visitorContext.close();

      await useTestWallet(page, PHONES_WALLET);
      await signInThroughUi(page);
      for (const path of SIGNED_IN_PAGES) {
        await page.goto(path);
        await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
        await expect(page.getByRole("status", { name: /^Loading/ })).toHaveCount(0);
        await expectNoSidewaysScroll(page, `${path} signed in`);
        violations.push(...(await seriousAxeViolations(page, `${path} signed in`)));
      }
      expect(violations).toEqual([]);
    });
  });
}
