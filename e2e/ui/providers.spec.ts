import type { ModelOfferList } from "../../lib/market/schemas";
import { expect, test } from "../fixtures/index";
import { APP_ORIGIN } from "../fixtures/stack";
import { VIEWPORTS } from "../fixtures/pages";

/**
 * The model page's provider table (GET /v1/market/models/{id}/offers): each live offer with its price per 1M tokens,
 * what it served (measured from the traffic this test sends), what its supplier declared and its probe state, as a
 * table at desktop width and one card per offer on a phone.
 */
const MODEL = "llama-3.3-70b";

async function modelOffers(): Promise<ModelOfferList> {
  const res = await fetch(`${APP_ORIGIN}/v1/market/models/${MODEL}/offers`);
  expect(res.status).toBe(200);
  return (await res.json()) as ModelOfferList;
}

test("the model page lists its providers with measured, declared and probe figures, at desktop and phone width", async ({
  page,
  agent,
}) => {
  const before = await modelOffers();
  // The demo supplier's 80¢ offer: the traffic below is pinned to it (provider.only), whatever else is posted.
  const target = before.data.find((o) => o.price_cents === 80)!;
  expect(target).toBeDefined();
  // Enough requests for the 1 h window to show figures, each served by that offer.
  const needed = Math.max(0, before.min_requests - target.measured["1h"].requests);
  for (let i = 0; i < needed; i++) {
    const completion = await agent.client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: `provider table request ${i}` }],
      max_tokens: 16,
      // @ts-expect-error svc's (and OpenRouter's) provider preferences are not in the OpenAI SDK's types
      provider: { only: [target.id] },
    });
    expect(completion.choices[0].message.content).toBeTruthy();
  }
  // The list is cached for a few seconds, like the other market reads.
  await expect
    .poll(async () => (await modelOffers()).data.find((o) => o.id === target.id)!.measured["1h"])
    .toMatchObject({ sufficient: true, success_rate: 1, requests: Math.max(before.min_requests, target.measured["1h"].requests) });

  for (const viewport of VIEWPORTS) {
    await page.setViewportSize({ width: viewport.width, height: viewport.height });
    await page.goto(`/market/${MODEL}`);
    const providers = page.getByRole("region", { name: "Providers" });
    await expect(providers).toBeVisible();
    // One entry per live offer: a table row on a desktop, a card on a phone (the other one is hidden).
    const entries =
      viewport.name === "desktop"
        ? providers.getByRole("table", { name: `Providers for ${MODEL}` }).locator("tbody tr")
        : providers.getByRole("list", { name: `Providers for ${MODEL}` }).getByRole("listitem");
    await expect(entries).toHaveCount(before.data.length);
    const entry = entries.filter({ hasText: `offer ${target.id.slice(0, 8)}` });
    await expect(entry).toContainText("80¢");
    await expect(entry).toContainText(`${usd(target.usd_per_mtok.prompt)} in · ${usd(target.usd_per_mtok.completion)} out / 1M`);
    await expect(entry).toContainText(target.declared.quantization === "unknown" ? "quantization unknown" : target.declared.quantization);
    // The 24 h window is shown first; the 1 h window holds this test's traffic, measured: a latency and 100 % success.
    await providers.getByRole("radio", { name: "1 h" }).click();
    await expect(providers.getByRole("radio", { name: "1 h" })).toHaveAttribute("aria-checked", "true");
    await expect(entry).toContainText(/\d+ \/ \d+\sms/);
    await expect(entry).toContainText("100.0%");
    await expect(entry).toContainText(/Probes pass|Not probed yet|Flagged/);
    // Nothing on the page is wider than the screen.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  }
});

/** "0.560000" → "$0.56", as the page formats it. */
function usd(decimal: string): string {
  const trimmed = decimal.replace(/0+$/, "").replace(/\.$/, "");
  const [whole, fraction = ""] = trimmed.split(".");
  return `$${whole}.${fraction.padEnd(2, "0")}`;
}
