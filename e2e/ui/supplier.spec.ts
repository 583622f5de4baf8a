import { getAddress } from "viem";
import { ANVIL_DEV_ACCOUNTS } from "../../lib/chain/constants";
import { parseMicros } from "../../lib/money";
import type { Earnings } from "../../lib/supply/schemas";
import { SvcSession } from "../fixtures/api";
import { usdcBalance, usdcTransfers } from "../fixtures/chain";
import { expect, hydratingPage, test } from "../fixtures/index";
import { usdTextToMicros } from "../fixtures/money";
import { E2E_PLATFORM_FEE_BPS, E2E_WALLETS, UPSTREAM_URL } from "../fixtures/stack";

test.use({ wallet: "supplier" });

const UPSTREAM_KEY = "ref-upstream-dev-key";

test("posts an offer on the reference upstream, sees the check and the offer on the public book, edits, pauses and resumes it", async ({
  signedInPage: page,
  browser,
}) => {
  // A price no other offer on this stack has, so the rows below are this offer's alone (also on a reused stack).
  const price = 35 + (Date.now() % 40);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Supply" }).click();
  const form = page.getByRole("region", { name: "Post an offer" });
  await form.getByLabel("Upstream base URL").fill(UPSTREAM_URL);
  await form.getByLabel("Upstream API key").fill(UPSTREAM_KEY);
  await form.getByRole("checkbox", { name: /llama-3\.3-70b/ }).check();
  await form.getByLabel("Price").fill(String(price));
  await form.getByLabel("Daily capacity").fill("50");
  // What the supplier declares: shown to buyers with the offer (and routed by).
  await form.getByLabel("Quantization").selectOption("int8");
  await form.getByRole("radio", { name: "No, it keeps none" }).check();
  await form.getByRole("radio", { name: "No training" }).check();
  await form.getByRole("button", { name: "Post offer" }).click();

  const check = form.getByRole("status").filter({ hasText: "Upstream check passed" });
  await expect(check).toBeVisible();
  await expect(check.getByRole("table", { name: "Upstream pricing" }).getByRole("row").filter({ hasText: "llama-3.3-70b" })).toBeVisible();

  const offer = page.getByRole("article", { name: `Offer ${price}¢ per diem, llama-3.3-70b` });
  await expect(offer).toContainText("On the book");
  await expect(offer).toContainText("50 diem left of 50 diem a day");
  await expect(offer).toContainText("int8");
  await expect(offer).toContainText("keeps no prompts");

  // The public order book, seen by a visitor without a wallet.
  const visitor = hydratingPage(await browser.newPage());
  await visitor.goto("/market/llama-3.3-70b");
  const book = visitor.getByRole("table", { name: "Order book for llama-3.3-70b" });
  // One number of decimals down the column: "50 diem" beside whole levels, "50.000000 diem" beside a burned one.
  await expect(book.getByRole("row").filter({ hasText: `${price}¢` })).toContainText(/(^|[^\d.])50(\.0+)?\sdiem/);
  const provider = visitor
    .getByRole("table", { name: "Providers for llama-3.3-70b" })
    .locator("tbody tr")
    .filter({ hasText: `${price}¢` });
  await expect(provider).toContainText("int8");
  await expect(provider).toContainText("No retention");

  await offer.getByRole("button", { name: `Edit offer at ${price}¢` }).click();
  const edit = page.getByRole("dialog", { name: "Edit offer" });
  await edit.getByLabel("Price").fill(String(price - 1));
  await edit.getByLabel("Quantization").selectOption("fp8");
  await edit.getByRole("button", { name: "Save changes" }).click();
  const edited = page.getByRole("article", { name: `Offer ${price - 1}¢ per diem, llama-3.3-70b` });
  await expect(edited).toBeVisible();
  await expect(book.getByRole("row").filter({ hasText: `${price - 1}¢` })).toBeVisible();
  await expect(book.getByRole("row").filter({ hasText: `${price}¢` })).toHaveCount(0);
  await expect(edited).toContainText("fp8");
  const editedProvider = visitor
    .getByRole("table", { name: "Providers for llama-3.3-70b" })
    .locator("tbody tr")
    .filter({ hasText: `${price - 1}¢` });
  await expect(editedProvider).toContainText("fp8");

  await edited.getByRole("button", { name: "Pause" }).click();
  await expect(edited).toContainText("Paused");
  await expect(book.getByRole("row").filter({ hasText: `${price - 1}¢` })).toHaveCount(0);
  await edited.getByRole("button", { name: "Resume" }).click();
  await expect(edited).toContainText("On the book");
  await expect(book.getByRole("row").filter({ hasText: `${price - 1}¢` })).toBeVisible();

  // Withdrawn for good: off the book, gone from the list.
  await edited.getByRole("button", { name: "Delist" }).click();
  await page.getByRole("dialog", { name: "Delist this offer?" }).getByRole("button", { name: "Delist offer" }).click();
  await expect(edited).toHaveCount(0);
  await expect(book.getByRole("row").filter({ hasText: `${price - 1}¢` })).toHaveCount(0);
  await visitor.close();
});

test("the offer form and the earnings page state what the supplier keeps after the configured platform fee", async ({
  signedInPage: page,
}) => {
  // The stack runs with PLATFORM_FEE_BPS=1250; the figures below are worked out by hand for that fee.
  expect(E2E_PLATFORM_FEE_BPS).toBe(1250);
  await page.goto("/supply");
  const price = page.getByRole("region", { name: "Post an offer" }).getByLabel("Price");
  await price.fill("90");
  await expect(price).toHaveAccessibleDescription("10% below list. You earn 78.75¢ per diem after svc's 12.5% fee.");
  await price.fill("37");
  await expect(price).toHaveAccessibleDescription("63% below list. You earn 32.375¢ per diem after svc's 12.5% fee.");
  await price.fill("120");
  await expect(price).toHaveAccessibleDescription("20% above list. You earn 105¢ per diem after svc's 12.5% fee.");

  await page.goto("/supply/earnings");
  await expect(page.getByRole("region", { name: "Earnings", exact: true })).toContainText("87.5% of every request your offers serve");
});

test("an offer that fails the upstream check is refused inline", async ({ signedInPage: page }) => {
  await page.goto("/supply");
  const form = page.getByRole("region", { name: "Post an offer" });
  await form.getByLabel("Upstream base URL").fill(UPSTREAM_URL);
  await form.getByLabel("Upstream API key").fill("not-the-right-key");
  await form.getByRole("checkbox", { name: /qwen3-235b/ }).check();
  await form.getByRole("radio", { name: "Yes, it keeps them" }).check();
  await form.getByRole("radio", { name: "No training" }).check();
  await form.getByRole("button", { name: "Post offer" }).click();
  await expect(form.getByRole("alert").first()).toContainText("Your upstream rejected that API key");
  await expect(form.getByLabel("Upstream API key")).toHaveAttribute("aria-invalid", "true");
});

test("earns from a buyer's completion and withdraws the earnings to the wallet on chain", async ({
  signedInPage: page,
  account,
  agent,
}) => {
  // The cheapest offer on the book, so the agent's completion is routed here.
  const supplier = await SvcSession.signIn(ANVIL_DEV_ACCOUNTS[E2E_WALLETS.supplier]);
  await supplier.postOffer({
    upstream_base_url: UPSTREAM_URL,
    upstream_api_key: UPSTREAM_KEY,
    models: ["mistral-31-24b"],
    price_cents: 30,
    daily_capacity: "10",
  });
  const before = parseMicros((await supplier.ok<Earnings>("GET", "/v1/supply/earnings")).available)!;
  const { response } = await agent.client.chat.completions
    .create({
      model: "mistral-31-24b",
      messages: [{ role: "user", content: "Tell me about order books in one long paragraph, please." }],
    })
    .withResponse();
  // The clear pays the supplier floor(cost x (1 - fee)), at the fee the stack is configured with.
  const cost = parseMicros(response.headers.get("x-svc-cost") ?? "")!;
  const share = (cost * BigInt(10_000 - E2E_PLATFORM_FEE_BPS)) / 10_000n;
  expect(share).toBeGreaterThan(0n);

  await page.goto("/supply/earnings");
  const available = page.getByRole("group", { name: "Available to withdraw" });
  await expect.poll(async () => usdTextToMicros(await available.textContent())).toBe(before + share);
  const earned = usdTextToMicros(await available.textContent());
  const walletBefore = await usdcBalance(account.address);

  const form = page.getByRole("form", { name: "Withdraw" });
  await form.getByRole("button", { name: "Max" }).click();
  await form.getByRole("button", { name: "Withdraw" }).click();
  const sent = form.getByRole("status").filter({ hasText: "Sent" });
  await expect(sent).toBeVisible();
  const hash = (await sent.getByLabel("Transaction hash", { exact: true }).textContent()) as `0x${string}`;
  expect(hash).toMatch(/^0x[0-9a-f]{64}$/);

  const transfers = await usdcTransfers(hash);
  expect(transfers).toContainEqual(expect.objectContaining({ to: getAddress(account.address), value: earned }));
  expect(await usdcBalance(account.address)).toBe(walletBefore + earned);
  await expect(available).toHaveText(/\$0\.00$/);
  await expect(page.getByRole("table", { name: "Withdrawals" }).getByRole("row").filter({ hasText: "Sent" }).first()).toBeVisible();
});
