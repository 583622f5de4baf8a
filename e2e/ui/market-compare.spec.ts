import { mkdirSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import pg from "pg";
import { ANVIL_DEV_ACCOUNTS } from "../../lib/chain/constants";
import { SvcSession } from "../fixtures/api";
import { expect, test } from "../fixtures/index";
import { APP_ORIGIN, E2E_PORTS, UPSTREAM_URL } from "../fixtures/stack";
import { signInThroughUi, useTestWallet } from "../fixtures/wallet";
import { deviceOf, VIEWPORTS } from "../fixtures/pages";

/**
 * Issue 28, items 8 and 11: the market page as a buyer compares (price history over 1H / 1D / 1W with its gaps,
 * copy that fits the pointer), Save that sends one PATCH however it is clicked, and an API reference that is small
 * and still opens at an operation's anchor. Each at desktop (1440×900) and phone (390×844, touch) width.
 *
 * Dev account 8 is this file's (no other spec uses it): its default max price and its offer are changed here.
 */
const MODEL = "llama-3.3-70b";
const WALLET = 8;
const DIR = "test-results/screenshots";
const DAY = 86_400_000;

/** The e2e stack's database: DATABASE_URL when the stack was given one, else its embedded PGlite. */
function databaseUrl(): string {
  // eslint-disable-next-line no-restricted-properties -- the test process reads the URL the stack was started with
  return process.env.DATABASE_URL ?? `postgresql://postgres:postgres@127.0.0.1:${E2E_PORTS.embeddedDb}/postgres`;
}

/**
 * Moves one real trade (the clear of `completionId`) two days back: the only way to have a trade in the past of a
 * stack started minutes ago. Only the clear's time changes; its amounts and ledger lines stay as the router wrote them.
 */
async function backdateTrade(completionId: string, ms: number) {
  const client = new pg.Client({ connectionString: databaseUrl() });
  await client.connect();
  try {
    const res = await client.query("UPDATE clears SET created_at = created_at - make_interval(secs => $2) WHERE completion_id = $1", [
      completionId,
      ms / 1000,
    ]);
    expect(res.rowCount).toBe(1);
  } finally {
    await client.end();
  }
}

async function seriousAxeViolations(page: Page, label: string): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${label}: ${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(" | ")}`);
}

async function expectNoSidewaysScroll(page: Page) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

/** Runs of consecutive buckets with a price, from the chart's data table ("… UTC: no trades" is a bucket without). */
async function pricedRuns(page: Page, history: ReturnType<Page["getByRole"]>) {
  const details = await history.locator("table tbody tr td:nth-child(2)").allTextContents();
  let runs = 0;
  let priced = 0;
  details.forEach((d, i) => {
    const has = !d.includes("no trades");
    if (has) priced += 1;
    if (has && (i === 0 || details[i - 1].includes("no trades"))) runs += 1;
  });
  return { buckets: details.length, runs, priced };
}

for (const viewport of VIEWPORTS) {
  test.describe(`${viewport.name} ${viewport.width}×${viewport.height}`, () => {
    test.use(deviceOf(viewport));

    test("price history: 1H / 1D / 1W ranges, a line that breaks where nothing traded, round axis values, words for the pointer", async ({
      page,
      agent,
    }) => {
      // Two real trades: one moved two days back, one now. In the week they sit buckets apart with nothing between.
      const ask = (content: string) =>
        agent.client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content }], max_tokens: 8 });
      const old = await ask(`history, two days ago (${viewport.name})`);
      await backdateTrade(old.id, 2 * DAY);
      await ask(`history, now (${viewport.name})`);

      await page.goto(`/market/${MODEL}`);
      const history = page.getByRole("region", { name: "Price and volume history" });
      const ranges = history.getByRole("group", { name: "Time range" });
      // A day is shown first; each button says whether it is the one shown.
      await expect(ranges.getByRole("button", { name: "1D" })).toHaveAttribute("aria-pressed", "true");
      await expect(ranges.getByRole("button", { name: "1H" })).toHaveAttribute("aria-pressed", "false");

      await ranges.getByRole("button", { name: "1W" }).click();
      await expect(ranges.getByRole("button", { name: "1W" })).toHaveAttribute("aria-pressed", "true");
      await expect(ranges.getByRole("button", { name: "1D" })).toHaveAttribute("aria-pressed", "false");
      const chart = history.getByRole("img", { name: `Price and volume history for ${MODEL}, last week` });
      await expect(chart).toBeVisible();
      // 28 six-hour buckets, every one in the data, the empty ones saying so.
      const week = await pricedRuns(page, history);
      expect(week.buckets).toBe(28);
      expect(week.runs).toBeGreaterThanOrEqual(2);
      // The price line is one segment per run of traded buckets: it does not draw across the empty ones.
      const line = chart.locator("path");
      const d = (await line.getAttribute("d"))!;
      expect(d.match(/M/g)?.length).toBe(week.runs);
      expect(d.match(/L/g)?.length ?? 0).toBe(week.priced - week.runs);
      // The x axis marks days, at midnight UTC ("Nov 24"), not times of day.
      const xLabels = await chart.locator("text[text-anchor='middle']").allTextContents();
      expect(xLabels.length).toBeGreaterThan(1);
      for (const label of xLabels) expect(label).toMatch(/^[A-Z][a-z]{2} \d{1,2}$/);

      await ranges.getByRole("button", { name: "1H" }).click();
      await expect(ranges.getByRole("button", { name: "1H" })).toHaveAttribute("aria-pressed", "true");
      const hourChart = history.getByRole("img", { name: `Price and volume history for ${MODEL}, last hour` });
      await expect(hourChart).toBeVisible();
      expect((await pricedRuns(page, history)).buckets).toBe(12);
      // Round axis values: the time labels fall on quarter hours, the price axis on whole steps.
      for (const label of await hourChart.locator("text[text-anchor='middle']").allTextContents())
        expect(label).toMatch(/^\d\d:(00|15|30|45)$/);
      const priceTicks = (await hourChart.locator("text.fill-sky-700").allTextContents()).map((t) => Number(t.replace("¢", "")));
      expect(priceTicks.length).toBeGreaterThanOrEqual(2);
      const step = priceTicks[1] - priceTicks[0];
      expect([0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50]).toContain(Number(step.toPrecision(6)));
      for (const t of priceTicks) expect(Math.abs(t / step - Math.round(t / step))).toBeLessThan(1e-9);

      // The newest bucket with a trade: the "now" trade's, or an older one when a 5-minute boundary has passed since it.
      const hourDetails = await history.locator("table tbody tr td:nth-child(2)").allTextContents();
      const newest = hourDetails.map((text) => !text.includes("no trades")).lastIndexOf(true);
      expect(newest).toBeGreaterThanOrEqual(0);

      // The reader is told how to see a bucket's numbers in the words of their pointer.
      const detail = history.getByTestId("chart-detail");
      const depthDetail = page.getByTestId("depth-detail");
      if (viewport.touch) {
        await expect(detail.getByText("Tap a bar for its time.")).toBeVisible();
        await expect(detail.getByText(/Hover/)).toBeHidden();
        await expect(depthDetail.getByText(/Hover/)).toBeHidden();
        await expect(depthDetail.getByText(/^Tap the chart/)).toBeVisible();
        // A tap in that bucket's column (above its bar) shows its numbers.
        const column = (await hourChart.locator('rect[fill="transparent"]').nth(newest).boundingBox())!;
        const chartBox = (await hourChart.boundingBox())!;
        await hourChart.tap({ position: { x: column.x - chartBox.x + column.width / 2, y: column.y - chartBox.y + 4 } });
        await expect(detail).toContainText(/UTC: \$[\d.,]+ volume/);
      } else {
        await expect(detail.getByText("Hover or focus the chart and use ←/→ for each time.")).toBeVisible();
        await expect(detail.getByText(/^Tap/)).toBeHidden();
        // ← from the end steps onto the last bucket, then back to that one.
        await hourChart.focus();
        for (let i = hourDetails.length; i > newest; i--) await page.keyboard.press("ArrowLeft");
        await expect(detail).toContainText(/UTC: \$[\d.,]+ volume/);
      }
      await expectNoSidewaysScroll(page);
      expect(await seriousAxeViolations(page, `/market/${MODEL}`)).toEqual([]);

      // The buyer's comparison: every provider with price per 1M tokens, measured, declared and probe figures.
      const providers = page.getByRole("region", { name: "Providers" });
      const entry = (
        viewport.touch
          ? providers.getByRole("list", { name: `Providers for ${MODEL}` }).getByRole("listitem")
          : providers.getByRole("table", { name: `Providers for ${MODEL}` }).locator("tbody tr")
      ).first();
      for (const text of [
        /¢/,
        /\$[\d.]+ in · \$[\d.]+ out \/ 1M/,
        /quantization unknown|fp8|fp16|bf16|int8|int4/,
        /retention|Retains/,
        /Probes pass|Not probed yet|Flagged/,
      ])
        await expect(entry).toContainText(text);
      if (viewport.touch)
        for (const label of ["Latency p50 / p95", "Throughput", "Uptime", "Disputes"]) await expect(entry).toContainText(label);
      else
        for (const header of ["Price", "Latency p50 / p95", "Throughput", "Uptime", "Disputes", "Declared", "Probes"])
          await expect(providers.getByRole("columnheader", { name: header })).toBeVisible();

      mkdirSync(DIR, { recursive: true });
      await history.screenshot({ path: `${DIR}/market-history-1h-${viewport.name}.png` });
      await ranges.getByRole("button", { name: "1W" }).click();
      await expect(chart).toBeVisible();
      await history.screenshot({ path: `${DIR}/market-history-1w-${viewport.name}.png` });
      await providers.screenshot({ path: `${DIR}/market-providers-${viewport.name}.png` });
    });

    test("a double click on Save sends one PATCH: the max price and the offer edit dialog", async ({ page }) => {
      const supplier = await SvcSession.signIn(ANVIL_DEV_ACCOUNTS[WALLET]);
      const price = viewport.touch ? 171 : 161;
      const offer = await supplier.postOffer({
        upstream_base_url: UPSTREAM_URL,
        upstream_api_key: "ref-upstream-dev-key",
        models: ["mistral-31-24b"],
        price_cents: price,
        daily_capacity: "1",
      });
      const patches: string[] = [];
      page.on("request", (request) => {
        if (request.method() === "PATCH") patches.push(new URL(request.url()).pathname);
      });
      try {
        await useTestWallet(page, WALLET);
        await signInThroughUi(page);

        const maxPrice = page.getByRole("region", { name: "Default max price" });
        await maxPrice.getByRole("textbox", { name: "Max price" }).fill(viewport.touch ? "92" : "91");
        await maxPrice.getByRole("button", { name: "Save" }).dblclick();
        await expect(maxPrice.getByRole("status").filter({ hasText: "Saved." })).toBeVisible();
        await expect(maxPrice).toContainText(`Now: ${viewport.touch ? 92 : 91}¢ / diem`);
        expect(patches.filter((p) => p === "/v1/account")).toHaveLength(1);

        await page.goto("/supply");
        await page.getByRole("button", { name: `Edit offer at ${price}¢` }).click();
        const edit = page.getByRole("dialog", { name: "Edit offer" });
        await edit.getByLabel("Price").fill(String(price + 1));
        await edit.getByRole("button", { name: "Save changes" }).dblclick();
        await expect(edit).toBeHidden();
        await expect(page.getByRole("button", { name: `Edit offer at ${price + 1}¢` })).toBeVisible();
        expect(patches.filter((p) => p === `/v1/supply/offers/${offer.id}`)).toHaveLength(1);
      } finally {
        await supplier.ok("DELETE", `/v1/supply/offers/${offer.id}`);
      }
    });

    test("/docs/reference is under 200 KB of HTML and opens at an operation's anchor, from a link or the search", async ({ page }) => {
      const res = await fetch(`${APP_ORIGIN}/docs/reference`);
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(Buffer.byteLength(html), "bytes of HTML").toBeLessThan(200_000);
      // Every operation's anchor is in the server's HTML (the search and other pages link to them).
      for (const id of ["op-listTrades", "op-getMarketHistory", "op-createChatCompletion", "schema-MarketHistory"])
        expect(html).toContain(`id="${id}"`);

      // Opened at an anchor: that operation shows its parameters and answers.
      await page.goto("/docs/reference#op-listTrades");
      const trades = page.getByRole("region", { name: "GET /v1/market/trades" });
      await expect(trades).toBeInViewport();
      await expect(trades.getByRole("group")).toHaveAttribute("open", "");
      await expect(trades.getByRole("heading", { name: "Parameters" })).toBeVisible();
      await expect(trades.getByText("limit", { exact: true })).toBeVisible();
      await expect(trades.getByText("model_not_found")).toBeVisible();
      // Others stay closed until opened.
      const history = page.getByRole("region", { name: "GET /v1/market/history" });
      await expect(history.getByText("range", { exact: true })).toHaveCount(0);

      // The search on the same page: its result opens the operation there.
      await page.getByRole("searchbox", { name: "Search the docs" }).fill("price and volume history");
      await page
        .getByRole("list", { name: "Search results" })
        .getByRole("link", { name: /GET \/v1\/market\/history/ })
        .click();
      await expect(page).toHaveURL(/\/docs\/reference#op-getMarketHistory$/);
      await expect(history).toBeInViewport();
      await expect(history.getByText("range", { exact: true })).toBeVisible();
      // A schema named in an answer opens where it is described.
      await history.getByRole("link", { name: "MarketHistory" }).first().click();
      await expect(page).toHaveURL(/#schema-MarketHistory$/);
      await expect(page.locator("#schema-MarketHistory").getByText("bucket_seconds")).toBeVisible();

      // From another docs page, the search lands on the reference with the operation open.
      await page.goto("/docs/errors");
      await page.getByRole("searchbox", { name: "Search the docs" }).fill("top-up");
      await page
        .getByRole("list", { name: "Search results" })
        .getByRole("link", { name: /POST \/v1\/x402\/top-up/ })
        .click();
      await expect(page).toHaveURL(/\/docs\/reference#op-/);
      const topUp = page.getByRole("region", { name: "POST /v1/x402/top-up" });
      await expect(topUp).toBeInViewport();
      await expect(topUp.getByRole("heading", { name: "Request body (application/json)" })).toBeVisible();

      await expectNoSidewaysScroll(page);
      expect(await seriousAxeViolations(page, "/docs/reference")).toEqual([]);
      mkdirSync(DIR, { recursive: true });
      await page.screenshot({ path: `${DIR}/docs-reference-open-${viewport.name}.png` });
    });
  });
}
