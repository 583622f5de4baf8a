import { getAddress } from "viem";
import { formatUsd } from "../../components/ui/format";
import { bearerClient } from "../fixtures/api";
import { platformAccounts, usdcBalance, usdcTransfers } from "../fixtures/chain";
import { expect, test } from "../fixtures/index";
import { usdTextToMicros } from "../fixtures/money";
import { APP_ORIGIN } from "../fixtures/stack";

test.use({ wallet: "buyer" });

// This run's treasury (scripts/e2e-stack.ts generates it): never one of anvil's public accounts.
const TREASURY = platformAccounts().treasury;

test("tops up over x402 and sees the balance rise and the USDC move on chain", async ({ signedInPage: page, account }) => {
  const available = page.getByRole("group", { name: "Available" });
  await expect(available).toContainText("$");
  const before = usdTextToMicros(await available.textContent());
  const walletBefore = await usdcBalance(account.address);

  await page.getByLabel("Amount (USD)").fill("25");
  await page.getByRole("button", { name: "Top up $25.00" }).click();
  const done = page.getByRole("status").filter({ hasText: "Added $25.00 to your balance" });
  await expect(done).toBeVisible();
  await expect.poll(async () => usdTextToMicros(await available.textContent())).toBe(before + 25_000_000n);

  const hash = (await done.getByLabel("Transaction hash", { exact: true }).textContent()) as `0x${string}`;
  expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
  expect(await usdcTransfers(hash)).toContainEqual({ from: getAddress(account.address), to: getAddress(TREASURY), value: 25_000_000n });
  expect(await usdcBalance(account.address)).toBe(walletBefore - 25_000_000n);
});

test("creates a key that is shown once, uses it from the OpenAI SDK, sees the usage and the balance fall, then revokes it", async ({
  signedInPage: page,
}) => {
  const name = `e2e key ${Date.now().toString(36)}`;
  const available = page.getByRole("group", { name: "Available" });
  await expect(available).toContainText("$");
  const balanceBefore = usdTextToMicros(await available.textContent());
  expect(balanceBefore).toBeGreaterThan(0n);

  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "API keys" }).click();
  await page.getByRole("button", { name: "Create key" }).first().click();
  const create = page.getByRole("dialog", { name: "Create an API key" });
  await create.getByLabel("Name").fill(name);
  await create.getByLabel("Max price (optional)").fill("100");
  await create.getByLabel("Spend limit (optional)").fill("5");
  await create.getByRole("button", { name: "Create key" }).click();

  const reveal = page.getByRole("dialog", { name: "Your new API key" });
  await expect(reveal.getByRole("status")).toContainText("Copy it now: you won't see it again");
  const key = await reveal.getByLabel("API key", { exact: true }).inputValue();
  expect(key).toMatch(/^svc_[A-Za-z0-9]{30,}$/);
  await expect(reveal.getByRole("button", { name: "Copy API key" })).toBeVisible();
  await reveal.getByRole("button", { name: "I've saved my key" }).click();
  await expect(reveal).toBeHidden();

  const row = page.getByRole("table", { name: "API keys" }).getByRole("row").filter({ hasText: name });
  await expect(row).toContainText("Active");
  await expect(row).toContainText(key.slice(0, 12));
  await expect(page.getByText(key)).toHaveCount(0);

  const client = bearerClient(key);
  const completion = await client.chat.completions.create({
    model: "llama-3.3-70b",
    messages: [{ role: "user", content: "Hello from Playwright" }],
  });
  expect(completion.object).toBe("chat.completion");
  expect(completion.choices[0].message.content).toBeTruthy();
  expect(completion.usage?.total_tokens).toBeGreaterThan(0);

  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Usage" }).click();
  const usageRow = page.getByRole("table", { name: "Requests" }).getByRole("row").filter({ hasText: name });
  await expect(usageRow).toHaveCount(1);
  await expect(usageRow).toContainText("llama-3.3-70b");
  const cost = usdTextToMicros(await usageRow.getByRole("cell").filter({ hasText: "$" }).textContent());
  expect(cost).toBeGreaterThan(0n);

  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Overview" }).click();
  await expect.poll(async () => usdTextToMicros(await available.textContent())).toBe(balanceBefore - cost);

  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "API keys" }).click();
  await page.getByRole("button", { name: `Revoke ${name}` }).click();
  const confirm = page.getByRole("dialog", { name: `Revoke “${name}”?` });
  await confirm.getByRole("button", { name: "Revoke key" }).click();
  await expect(confirm).toBeHidden();
  await expect(row).toContainText("Revoked");
  await expect(page.getByRole("button", { name: `Revoke ${name}` })).toHaveCount(0);

  await expect(
    client.chat.completions.create({ model: "llama-3.3-70b", messages: [{ role: "user", content: "again" }] }),
  ).rejects.toMatchObject({
    status: 401,
  });
});

test("gives a key a daily budget, sees what each call cost and the day's spend, then makes the budget weekly", async ({
  signedInPage: page,
}) => {
  const name = `e2e budget ${Date.now().toString(36)}`;
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "API keys" }).click();
  await page.getByRole("button", { name: "Create key" }).first().click();
  const create = page.getByRole("dialog", { name: "Create an API key" });
  await create.getByLabel("Name").fill(name);
  await create.getByLabel("Spend limit (optional)").fill("5");
  await create.getByLabel("Limit resets").selectOption("daily");
  await create.getByRole("button", { name: "Create key" }).click();
  const reveal = page.getByRole("dialog", { name: "Your new API key" });
  const key = await reveal.getByLabel("API key", { exact: true }).inputValue();
  await reveal.getByRole("button", { name: "I've saved my key" }).click();

  // The answer states its own cost, and the generation it names is the key's to look up.
  const { data: completion, response } = await bearerClient(key)
    .chat.completions.create({ model: "llama-3.3-70b", messages: [{ role: "user", content: "Hello from Playwright" }] })
    .withResponse();
  const usage = completion.usage as unknown as { cost: number; cost_details: { charge: string } };
  expect(usage.cost).toBeGreaterThan(0);
  expect(usage.cost).toBe(Number(usage.cost_details.charge));
  expect(response.headers.get("x-svc-generation-id")).toBe(completion.id);

  const self = await fetch(`${APP_ORIGIN}/v1/key`, { headers: { authorization: `Bearer ${key}` } });
  expect(self.status).toBe(200);
  const described = ((await self.json()) as { data: { limit: string; limit_reset: string; usage_daily: string } }).data;
  expect(described).toMatchObject({ limit: "5.000000", limit_reset: "daily", usage_daily: usage.cost_details.charge });

  const row = page.getByRole("table", { name: "API keys" }).getByRole("row").filter({ hasText: name });
  await page.reload();
  await expect(row).toContainText(`${formatUsd(usage.cost_details.charge)} today`);
  await expect(row).toContainText("Resets");

  await row.getByRole("button", { name: `Edit ${name}` }).click();
  const edit = page.getByRole("dialog", { name: `Edit “${name}”` });
  await edit.getByLabel("Limit resets").selectOption("weekly");
  await edit.getByRole("button", { name: "Save" }).click();
  await expect(edit).toBeHidden();
  await expect(row).toContainText("this week");
});
