import AxeBuilder from "@axe-core/playwright";
import { mkdirSync, readFileSync } from "node:fs";
import type { Locator, Page } from "@playwright/test";
import { ANVIL_DEV_ACCOUNTS } from "../../lib/chain/constants";
import type { LedgerItem, LedgerPage } from "../../lib/ledger/schemas";
import type { DailyEarningsList } from "../../lib/supply/schemas";
import { bearerClient, SvcSession } from "../fixtures/api";
import { expect, test } from "../fixtures/index";
import { UPSTREAM_URL } from "../fixtures/stack";
import { signInThroughUi, useTestWallet } from "../fixtures/wallet";
import { deviceOf, VIEWPORTS } from "../fixtures/pages";

/**
 * Issue 28 items 6 and 10: histories people can read (a running balance, a day's requests grouped per offer, filter
 * and range in the URL, a CSV of the ledger's lines) and supply earnings over time with delisted offers kept.
 *
 * The trader is anvil dev account 8 (no other spec uses it): it buys and sells, so its history has top-ups, spending
 * and earnings. Its offer is the cheapest on the book only while a test runs: every test delists it at the end, so
 * the specs that follow route to their own offers.
 */
const TRADER = 8;
const MODEL = "mistral-31-24b";
/** A model someone else sells in the stack (the demo supplier), bought between MODEL's requests. */
const OTHER_MODEL = "llama-3.3-70b";
const SCREENSHOTS = "test-results/screenshots";

type Trader = { session: SvcSession; offerId: string; requests: number };

/** Tops up, posts the cheapest offer on MODEL and buys `requests` completions from it with its own key. */
async function seedTrader(requests = 3): Promise<Trader> {
  const session = await SvcSession.signIn(ANVIL_DEV_ACCOUNTS[TRADER]);
  await session.topUp("1");
  const offer = await session.postOffer({
    upstream_base_url: UPSTREAM_URL,
    upstream_api_key: "ref-upstream-dev-key",
    models: [MODEL],
    price_cents: 5,
    daily_capacity: "10",
  });
  const { key } = await session.createKey({ name: "histories" });
  const client = bearerClient(key);
  for (let i = 0; i < requests; i++) {
    await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: `Write a long paragraph about ledgers, part ${i}` }],
    });
  }
  return { session, offerId: offer.id, requests };
}

async function delistAll(session: SvcSession) {
  const { data } = await session.ok<{ data: { id: string; status: string }[] }>("GET", "/v1/supply/offers");
  for (const o of data.filter((o) => o.status !== "withdrawn")) await session.ok("DELETE", `/v1/supply/offers/${o.id}`);
}

async function ledgerLines(session: SvcSession, query: string): Promise<LedgerItem[]> {
  const lines: LedgerItem[] = [];
  let cursor: string | null = null;
  do {
    const page: LedgerPage = await session.ok("GET", `/v1/account/ledger?limit=200${query}${cursor ? `&cursor=${cursor}` : ""}`);
    lines.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return lines;
}

/** The history as it is shown at this width: the table on a desktop, the list of cards on a phone. */
function history(page: Page): Locator {
  return page.getByRole("table", { name: "Money history" }).or(page.getByRole("list", { name: "Money history" }));
}

/** Top-level items of the history: table rows of the body, or cards. */
function historyItems(page: Page): Locator {
  return history(page).locator(":scope > tbody > tr, :scope > li");
}

async function expectNoSidewaysScroll(page: Page) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  expect(scrollWidth, `${page.url()} is ${scrollWidth}px wide in a ${innerWidth}px viewport`).toBeLessThanOrEqual(innerWidth);
}

async function expectNoSeriousAxeViolations(page: Page) {
  const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]).analyze();
  const serious = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(" | ")}`)).toEqual([]);
}

const today = () => new Date().toISOString().slice(0, 10);
const microsOfWire = (decimal: string) => BigInt(decimal.replace(".", ""));
/** "$1.234500" as shown → micro-dollars. */
const usdTextMicros = (text: string) => {
  const [whole, fraction = ""] = text.replace(/[^\d.]/g, "").split(".");
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, "0").slice(0, 6));
};
/** The page's way of showing an amount: every digit it has, at least two decimals ("$0.00012", "$1.50"). */
const shownUsd = (micros: bigint) => {
  const abs = micros < 0n ? -micros : micros;
  const fraction = (abs % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "").padEnd(2, "0");
  return `$${(abs / 1_000_000n).toLocaleString("en-US")}.${fraction}`;
};
/** The amount, at whatever fixed number of decimals its column shows, not a longer one that starts with it. */
const amountText = (micros: bigint) => new RegExp(`${shownUsd(micros).replace(/[$.]/g, "\\$&")}0*(?!\\d)`);
const DAY_LABEL = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", timeZone: "UTC" });

for (const device of VIEWPORTS) {
  const { name } = device;
  test.describe(`${name} ${device.width}×${device.height}`, () => {
    test.use(deviceOf(device));

    test("the running balance is the balance shown, and a day's requests are one row per offer that opens to its lines", async ({
      page,
    }) => {
      const trader = await seedTrader();
      try {
        await useTestWallet(page, TRADER);
        await signInThroughUi(page);
        const balance = await trader.session.ok<{ total: string }>("GET", "/v1/account/balance");

        await page.goto("/dashboard/history");
        await expect(history(page)).toBeVisible();
        // A day's group of requests shows no balance of its own (its lines interleave with other rows, so it would not
        // chain); opened, its newest line left the balance the account has (GET /v1/account/balance), to the micro-dollar.
        const api = await ledgerLines(trader.session, "");
        expect(api.find((l) => l.ledger === "balance")!.balance_after).toBe(balance.total);
        const spent = historyItems(page).filter({ hasText: "Spent" }).first();
        await expect(spent).not.toContainText("prepaid");
        await spent.getByRole("button", { expanded: false }).click();
        const newestPrepaidLine =
          name === "desktop"
            ? history(page).getByRole("row").filter({ hasText: "prepaid" }).first()
            : spent.getByRole("list").getByRole("listitem").first();
        await expect(newestPrepaidLine).toContainText(amountText(microsOfWire(balance.total)));
        await spent.getByRole("button", { expanded: true }).click();

        // Today's earnings on this offer: one row standing for each of its lines, whatever their number.
        const lines = await ledgerLines(trader.session, `&type=earnings&offer=${trader.offerId}&from=${today()}&to=${today()}`);
        expect(lines.length).toBe(trader.requests);
        // The newest group of that name is this offer's (earlier tests delisted offers of the same price).
        const groupItem = historyItems(page)
          .filter({ has: page.getByRole("button", { name: `${lines.length} requests · your 5¢ offer (${MODEL})`, exact: true }) })
          .first();
        const toggle = groupItem.getByRole("button", { expanded: false });
        await expect(toggle).toBeVisible();
        const earned = lines.reduce((sum, l) => sum + microsOfWire(l.amount), 0n);
        await expect(groupItem).toContainText(amountText(earned));
        await expect(groupItem).not.toContainText("earnings");

        const before = await historyItems(page).count();
        await toggle.click();
        await expect(groupItem.getByRole("button", { expanded: true })).toBeVisible();
        // Each line shows the balance it left.
        await expect(history(page)).toContainText(amountText(microsOfWire(lines[0]!.balance_after)));
        if (name === "desktop") {
          await expect(historyItems(page)).toHaveCount(before + lines.length);
        } else {
          await expect(groupItem.getByRole("list").getByRole("listitem")).toHaveCount(lines.length);
        }
        await expectNoSidewaysScroll(page);
        await expectNoSeriousAxeViolations(page);
        mkdirSync(SCREENSHOTS, { recursive: true });
        await page.screenshot({ path: `${SCREENSHOTS}/history-grouped-${name}.png`, fullPage: true });
      } finally {
        await delistAll(trader.session);
      }
    });

    test("interleaved models: each balance shown is its own line's, the lines chain, one precision per column", async ({ page }) => {
      const trader = await seedTrader(2);
      try {
        // Requests to two models, alternating, with a top-up between: their day groups interleave in time.
        const { key } = await trader.session.createKey({ name: "histories interleaved" });
        const client = bearerClient(key);
        for (const model of [MODEL, OTHER_MODEL, MODEL]) {
          await client.chat.completions.create({ model, messages: [{ role: "user", content: "One line" }], max_tokens: 20 });
          if (model === OTHER_MODEL) await trader.session.topUp("1");
        }
        await useTestWallet(page, TRADER);
        await signInThroughUi(page);
        // A desktop opens every day's group of requests, so each of its lines shows its balance; a phone reads the rows that
        // show one of their own (today's top-ups: a day's requests to one model are one group there).
        await page.goto(name === "desktop" ? "/dashboard/history?type=usage" : "/dashboard/history");
        await expect(history(page)).toBeVisible();
        if (name === "desktop") {
          const closed = history(page).getByRole("button", { expanded: false });
          while ((await closed.count()) > 0) await closed.first().click();
        }

        // The prepaid ledger's lines chain: each balance is the one before it plus the line's amount.
        const lines = (await ledgerLines(trader.session, "")).filter((l) => l.ledger === "balance");
        for (let i = 0; i + 1 < lines.length; i++) {
          expect(microsOfWire(lines[i]!.balance_after)).toBe(microsOfWire(lines[i + 1]!.balance_after) + microsOfWire(lines[i]!.amount));
        }
        const chained = new Set(lines.map((l) => microsOfWire(l.balance_after)));
        // "prepaid" is its own span, after the figure: its parent holds both.
        const shown = (await history(page).getByText("prepaid", { exact: true }).locator("..").allTextContents()).map((t) =>
          t.replace(/\s*prepaid$/, "").trim(),
        );
        expect(shown.length).toBeGreaterThanOrEqual(name === "desktop" ? 5 : 2);
        // One number of decimals down each column, and every balance shown is a line's own balance after, never a group's.
        const decimals = (texts: string[]) => new Set(texts.map((t) => /\.(\d+)$/.exec(t.replace(/[^\d.]/g, ""))?.[1]?.length));
        expect(decimals(shown)).toEqual(new Set([6]));
        for (const text of shown) expect(chained).toContain(usdTextMicros(text));
        if (name === "desktop") {
          const amounts = await history(page).locator("tbody td:nth-child(3)").allTextContents();
          expect(decimals(amounts.map((t) => t.trim()).filter(Boolean))).toEqual(new Set([6]));
        }
      } finally {
        await delistAll(trader.session);
      }
    });

    test("the filter and the date range live in the URL: Back and reload keep them", async ({ page }) => {
      const trader = await seedTrader(1);
      try {
        await useTestWallet(page, TRADER);
        await signInThroughUi(page);
        await page.goto("/dashboard/history");
        await page.getByRole("group", { name: "Show" }).getByRole("button", { name: "Top-ups" }).click();
        await expect(page).toHaveURL(/[?&]type=topup/);
        await page.getByLabel("From (UTC)").fill(today());
        await expect(page).toHaveURL(new RegExp(`[?&]from=${today()}`));
        const topups = (await ledgerLines(trader.session, `&type=topup&from=${today()}`)).length;

        const expectTopupsOnly = async () => {
          await expect(page.getByRole("group", { name: "Show" }).getByRole("button", { name: "Top-ups" })).toHaveAttribute(
            "aria-pressed",
            "true",
          );
          await expect(page.getByLabel("From (UTC)")).toHaveValue(today());
          await expect(historyItems(page)).toHaveCount(topups);
          await expect(history(page).getByText("Top-up", { exact: true })).toHaveCount(topups);
        };
        await expectTopupsOnly();

        await page.goto("/dashboard/usage");
        await page.goBack();
        await expectTopupsOnly();
        await page.reload();
        await expectTopupsOnly();

        // A range that holds nothing says so; the range ends no earlier than it starts.
        await page.getByLabel("To (UTC)").fill("2020-01-01");
        await expect(page.getByRole("alert").filter({ hasText: "The range ends before it starts." })).toBeVisible();
        await page.getByRole("button", { name: "All dates" }).click();
        await expect(page).not.toHaveURL(/from=|to=/);
        await expect(page).toHaveURL(/[?&]type=topup/);
        await expectNoSidewaysScroll(page);
      } finally {
        await delistAll(trader.session);
      }
    });

    test("the CSV download is exactly the ledger's lines for the filter", async ({ page }) => {
      const trader = await seedTrader(2);
      try {
        await useTestWallet(page, TRADER);
        await signInThroughUi(page);
        await page.goto("/dashboard/history?type=earnings");
        await expect(history(page)).toBeVisible();
        const download = page.waitForEvent("download");
        await page.getByRole("link", { name: "Download CSV" }).click();
        const file = await download;
        expect(file.suggestedFilename()).toBe("svc-ledger-earnings.csv");
        const csv = readFileSync((await file.path())!, "utf8")
          .trimEnd()
          .split("\r\n");
        const lines = await ledgerLines(trader.session, "&type=earnings");
        expect(csv[0]).toBe("created_at,entry_id,kind,ledger,amount,balance_after,model,offer,transaction,generation_id");
        expect(csv.slice(1)).toEqual(
          lines.map((l) =>
            [
              l.created_at,
              l.id,
              l.kind,
              l.ledger,
              l.amount,
              l.balance_after,
              l.model ?? "",
              l.offer ?? "",
              l.transaction ?? "",
              l.generation_id ?? "",
            ].join(","),
          ),
        );
        expect(csv.length - 1).toBeGreaterThanOrEqual(trader.requests);
      } finally {
        await delistAll(trader.session);
      }
    });

    test("suppliers see earnings per day and offer, and delisted offers in a collapsed list instead of 'No offers yet'", async ({
      page,
    }) => {
      const trader = await seedTrader(2);
      await delistAll(trader.session);
      await useTestWallet(page, TRADER);
      await signInThroughUi(page);

      await page.goto("/supply/earnings");
      const daily: DailyEarningsList = await trader.session.ok("GET", "/v1/supply/earnings/daily?days=30");
      const mine = daily.data.find((d) => d.day === today() && d.offer === trader.offerId)!;
      expect(mine.requests).toBe(trader.requests);
      await expect(page.getByRole("img", { name: /^Earnings per day: / })).toBeVisible();
      // The table is the API's days and offers, newest day first, each offer named as the supplier knows it.
      const { data: offers } = await trader.session.ok<{
        data: { id: string; price_cents: number; status: string; models: { id: string }[] }[];
      }>("GET", "/v1/supply/offers");
      const offerName = (id: string) => {
        const o = offers.find((x) => x.id === id)!;
        return `${o.price_cents}¢ offer · ${o.models.map((m) => m.id).join(", ")}${o.status === "withdrawn" ? " (delisted)" : ""}`;
      };
      // A table on a desktop, a card per day and offer on a phone (no sideways scroll).
      const perDay = page
        .getByRole("table", { name: "Earnings per day and offer" })
        .or(page.getByRole("list", { name: "Earnings per day and offer" }));
      const rows = perDay.locator(":scope > tbody > tr, :scope > li");
      await expect(rows).toHaveCount(daily.data.length);
      const expected = [...daily.data]
        .reverse()
        .map((d) =>
          name === "desktop"
            ? [DAY_LABEL.format(new Date(`${d.day}T00:00:00Z`)), offerName(d.offer), String(d.requests), shownUsd(microsOfWire(d.earned))]
            : [
                DAY_LABEL.format(new Date(`${d.day}T00:00:00Z`)),
                shownUsd(microsOfWire(d.earned)),
                offerName(d.offer),
                `${d.requests} request${d.requests === 1 ? "" : "s"}`,
              ],
        );
      const shown = await rows.evaluateAll((items) =>
        items.map((item) =>
          [...item.querySelectorAll(item.tagName === "TR" ? "td" : "span, strong")].map((cell) => cell.textContent?.trim()),
        ),
      );
      expect(shown).toEqual(expected);
      await expectNoSidewaysScroll(page);
      await expectNoSeriousAxeViolations(page);
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: `${SCREENSHOTS}/supply-earnings-chart-${name}.png`, fullPage: true });

      await page.goto("/supply");
      await expect(page.getByText("No offers yet")).toHaveCount(0);
      await expect(page.getByText("No offers on the book")).toBeVisible();
      const list = page.getByRole("list", { name: "Delisted offers" });
      await expect(list).toBeHidden();
      await page
        .locator("summary")
        .filter({ hasText: /Delisted offers \(\d+\)/ })
        .click();
      await expect(list).toBeVisible();
      const item = list.getByRole("listitem", { name: `Delisted offer 5¢ per diem, ${MODEL}` }).first();
      await expect(item).toContainText("Delisted by you");
      await expectNoSidewaysScroll(page);
      await expectNoSeriousAxeViolations(page);
      await page.screenshot({ path: `${SCREENSHOTS}/supply-delisted-${name}.png`, fullPage: true });
    });
  });
}
