import { ANVIL_DEV_ACCOUNTS } from "../../lib/chain/constants";
import { SvcSession } from "../fixtures/api";
import { seriousAxeViolations } from "../fixtures/axe";
import { expect, test } from "../fixtures/index";
import { deviceOf, VIEWPORTS } from "../fixtures/pages";
import { APP_ORIGIN, E2E_WALLETS } from "../fixtures/stack";

/**
 * Issue 38: refused requests (402, 429, 503 with their reason) are listed beside the served ones, counted per key, so a
 * buyer can see why an agent stopped: the keys page says it on the key, the Usage page lists them with what each was told.
 */
const DIR = "test-results/screenshots";

const ask = (key: string, headers: Record<string, string> = {}) =>
  fetch(`${APP_ORIGIN}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify({ model: "llama-3.3-70b", messages: [{ role: "user", content: "Are you there?" }], max_tokens: 50 }),
  });

/** A key of the buyer that an agent ran into its limit twice and asked below every offer's price once. */
async function refusedKey(): Promise<{ name: string; limitMessage: string }> {
  const session = await SvcSession.signIn(ANVIL_DEV_ACCOUNTS[E2E_WALLETS.buyer]);
  await session.topUp("1");
  const name = `stopped agent ${Date.now().toString(36)}`;
  const key = await session.createKey({ name, spend_limit: "0.000001" });
  let limitMessage = "";
  for (let i = 0; i < 2; i++) {
    const res = await ask(key.key);
    expect(res.status).toBe(402);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("spend_limit_exceeded");
    limitMessage = body.error.message;
  }
  const cheap = await ask(key.key, { "x-svc-max-cents": "1" });
  expect(cheap.status).toBe(503);
  expect(cheap.headers.get("x-svc-error-code")).toBe("no_offer_at_or_below_max");
  return { name, limitMessage };
}

for (const viewport of VIEWPORTS) {
  test.describe(`${viewport.name} ${viewport.width}×${viewport.height}`, () => {
    test.use({ ...deviceOf(viewport), wallet: "buyer" });

    test("a key's refused requests show on the key and on the Usage page, counted by reason with what the agent was told", async ({
      signedInPage: page,
    }) => {
      const { name, limitMessage } = await refusedKey();

      await page.goto("/dashboard/keys");
      const note = page.getByRole("link", { name: `${name}: 3 refused in 24 h · Key's spend limit reached`, exact: true });
      await expect(note).toBeVisible();
      expect(await seriousAxeViolations(page, `/dashboard/keys refusals ${viewport.name}`)).toEqual([]);
      await note.click();

      await expect(page).toHaveURL(/\/dashboard\/usage#refused$/);
      const panel = page.getByRole("region", { name: "Refusals", exact: true });
      await expect(panel).toBeVisible();
      // Per key, by reason: the table on a desktop, a card per key on a phone; the same words in both.
      const perKey =
        viewport.name === "desktop"
          ? panel.getByRole("table", { name: "Refusals per key" }).getByRole("row").filter({ hasText: name })
          : panel.getByRole("listitem").filter({ hasText: name }).first();
      await expect(perKey).toContainText("2× Key's spend limit reached");
      await expect(perKey).toContainText("402 spend_limit_exceeded");
      await expect(perKey).toContainText("1× No offer at or below the max price");
      await expect(perKey).toContainText("503 no_offer_at_or_below_max");
      // The latest refusals say what the request was told, word for word.
      await expect(panel.getByText(limitMessage, { exact: true }).filter({ visible: true }).first()).toBeVisible();

      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(viewport.width);
      await page.screenshot({ path: `${DIR}/refusals-${viewport.name}.png`, fullPage: true });
      expect(await seriousAxeViolations(page, `/dashboard/usage refusals ${viewport.name}`)).toEqual([]);
    });
  });
}
