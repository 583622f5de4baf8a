import { expect, test } from "../fixtures/index";

test("the public market shows models with list and best price, and each model's order book, without a wallet", async ({ page }) => {
  await page.goto("/");
  const models = page.getByRole("table", { name: "Models" });
  const llama = models.getByRole("row").filter({ hasText: "llama-3.3-70b" });
  await expect(llama).toContainText("in $0.70");
  await expect(llama).toContainText("¢ / diem");
  // The best price in dollars per 1M tokens: the demo's 80¢ offer on a list price of $0.70 in.
  await expect(llama).toContainText("$0.56 in ·");
  await expect(page.getByRole("note")).toContainText("reference upstream");
  // Wallet buttons wait for hydration, then work.
  await expect(page.getByRole("banner").getByRole("button", { name: "Connect wallet" })).toBeEnabled();

  await llama.getByRole("link", { name: "Llama 3.3 70B" }).click();
  await expect(page.getByRole("heading", { name: "Llama 3.3 70B", level: 1 })).toBeVisible();
  await expect(page.getByRole("img", { name: /Depth chart for llama-3\.3-70b/ })).toBeVisible();
  // The demo supplier's three seeded offers all serve this model.
  const book = page.getByRole("table", { name: "Order book for llama-3.3-70b" });
  for (const price of ["80¢", "90¢", "120¢"]) await expect(book.getByRole("row").filter({ hasText: price })).toBeVisible();
  await expect(page.getByRole("region", { name: "Recent trades" })).toBeVisible();

  await page.goto("/market/no-such-model");
  await expect(page.getByRole("heading", { name: "This page doesn't exist" })).toBeVisible();
});
