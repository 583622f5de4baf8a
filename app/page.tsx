import { ButtonLink } from "@/components/ui/button";
import { MarketOverview } from "@/components/market/market-overview";
import { LocalStackNotice } from "@/components/site/local-stack-notice";
import { listMarketModels } from "@/lib/market/models";
import { getPoolSummary } from "@/lib/market/pool";
import { getMarketStats } from "@/lib/market/stats";
import { listTrades } from "@/lib/market/trades";

export const dynamic = "force-dynamic";

// The market overview, server-rendered from the same functions as the public API, then kept live in the browser.
export default async function MarketPage() {
  const [models, stats, pool, trades] = await Promise.all([
    listMarketModels().catch(() => null),
    getMarketStats().catch(() => null),
    getPoolSummary().catch(() => null),
    listTrades({ limit: 20 }).catch(() => null),
  ]);

  return (
    <main className="mx-auto flex w-full max-w-6xl flex-col gap-8 px-4 py-8 sm:px-6 sm:py-12">
      <header className="flex flex-col gap-5 md:flex-row md:items-end md:justify-between">
        <div className="max-w-2xl">
          <p className="text-sm font-medium tracking-wide text-emerald-700 uppercase dark:text-emerald-400">Open inference market</p>
          <h1 className="mt-2 text-3xl font-semibold tracking-tight text-balance sm:text-4xl">
            Inference from the cheapest supplier, paid in USDC
          </h1>
          <p className="mt-3 text-zinc-600 dark:text-zinc-400">
            Suppliers sell spare capacity on OpenAI-compatible providers. Buyers call one endpoint and every request is routed to the
            cheapest offer at or below their max price.
          </p>
        </div>
        <div className="flex shrink-0 gap-2">
          <ButtonLink href="/dashboard">Start buying</ButtonLink>
          <ButtonLink href="/supply" variant="secondary">
            Sell capacity
          </ButtonLink>
        </div>
      </header>
      <LocalStackNotice />
      <MarketOverview initial={{ models, stats, pool, trades }} />
    </main>
  );
}
