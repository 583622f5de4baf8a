import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { OrderBook } from "@/components/market/order-book";
import { ProviderTable } from "@/components/market/provider-table";
import { UseThisModel } from "@/components/market/use-this-model";
import { LocalStackNotice } from "@/components/site/local-stack-notice";
import { deployment } from "@/lib/env";
import { formatDiem, formatTokens } from "@/components/ui/format";
import { getActiveModels, getBook } from "@/lib/market/book";
import { listModelOffers } from "@/lib/market/quality/offers";
import { getMarketStats } from "@/lib/market/stats";
import { listTrades } from "@/lib/market/trades";
import { formatListPrice } from "@/lib/wire";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ model: string }> };

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  const { model } = await params;
  return { title: `${decodeURIComponent(model)} order book` };
}

// GET /market/{model} – one model's order book: depth, price levels, 24 h stats, recent trades and its providers
export default async function ModelBookPage({ params }: Params) {
  const model = decodeURIComponent((await params).model);
  const catalog = await getActiveModels().catch(() => null);
  const entry = catalog?.get(model);
  if (catalog && !entry) notFound();
  const listPrice = entry && formatListPrice(entry);

  const [book, trades, stats, offers] = await Promise.all([
    getBook(model).catch(() => null),
    listTrades({ model, limit: 20 }).catch(() => null),
    getMarketStats().catch(() => null),
    entry ? listModelOffers(model).catch(() => null) : null,
  ]);

  return (
    <main className="mx-auto flex w-full max-w-6xl flex-col gap-6 px-4 py-8 sm:px-6 sm:py-10">
      <nav aria-label="Breadcrumb" className="text-sm text-zinc-600 dark:text-zinc-400">
        <Link href="/market" className="hover:text-zinc-800 hover:underline dark:hover:text-zinc-200">
          Market
        </Link>{" "}
        / <span className="text-zinc-800 dark:text-zinc-200">{entry?.name ?? model}</span>
      </nav>
      <header className="flex flex-col gap-1">
        <h1 className="text-2xl font-semibold tracking-tight sm:text-3xl">{entry?.name ?? model}</h1>
        <p className="flex flex-wrap gap-x-3 text-sm text-zinc-600 dark:text-zinc-400">
          <span className="font-mono">{model}</span>
          {listPrice && (
            <span>
              List price {formatDiem(listPrice.input_diem_per_mtok)} in
              {listPrice.cache_read_diem_per_mtok !== null && <> ({formatDiem(listPrice.cache_read_diem_per_mtok)} cached)</>} ·{" "}
              {formatDiem(listPrice.output_diem_per_mtok)} out per 1M tokens
            </span>
          )}
          {entry && <span>{formatTokens(entry.contextTokens, "token context")}</span>}
        </p>
      </header>
      <LocalStackNotice />
      <OrderBook model={model} initial={{ book, trades, stats }} />
      {entry && <ProviderTable model={model} initial={offers} />}
      {entry && <UseThisModel model={model} origin={deployment.origin} />}
    </main>
  );
}
