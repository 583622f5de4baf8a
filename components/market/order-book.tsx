"use client";

import { DepthChart } from "@/components/market/depth-chart";
import { PriceHistoryPanel } from "@/components/market/price-history";
import { PriceBadge, TradesTable } from "@/components/market/market-parts";
import { useBook, useMarketStats, useTrades, type BookView, type MarketStats, type TradeList } from "@/components/market/queries";
import { Panel } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Amount } from "@/components/ui/amount";
import { diemColumn, formatCents, formatDecimalCents, microsOf, plural } from "@/components/ui/format";
import { Term } from "@/components/ui/term";
import { QueryState } from "@/components/ui/query-state";
import { Stat } from "@/components/ui/stat";
import { Table, Td, Th } from "@/components/ui/table";

export function OrderBook({
  model,
  initial,
}: {
  model: string;
  initial: { book: BookView | null; trades: TradeList | null; stats: MarketStats | null };
}) {
  const book = useBook(model, initial.book);
  const trades = useTrades(model, initial.trades);
  const stats = useMarketStats(initial.stats);
  const modelStats = stats.data?.models.find((m) => m.model === model);

  return (
    <div className="flex flex-col gap-6">
      <QueryState query={book} loadingLabel="Loading the order book" errorTitle="Couldn't load the order book">
        {(b) => (
          <>
            <div className="grid grid-cols-2 gap-4 sm:grid-cols-3 lg:grid-cols-5">
              <Stat
                label="Best price"
                value={formatCents(b.best_price_cents)}
                hint={b.best_price_cents === null ? "No offers" : <PriceBadge cents={b.best_price_cents} />}
              />
              <Stat
                label="Available today"
                value={<Amount value={b.remaining_diem} unit="diem" />}
                hint={`${plural(b.offers, "offer")} · ${plural(b.suppliers, "supplier")}`}
              />
              <Stat
                label="VWAP 24h"
                value={modelStats?.vwap_cents ? formatDecimalCents(modelStats.vwap_cents) : "—"}
                hint={<Term term="vwap">What is VWAP?</Term>}
              />
              <Stat
                label="Volume 24h"
                value={<Amount value={modelStats?.volume_usdc ?? 0n} />}
                hint={plural(modelStats?.clears ?? 0, "request")}
              />
              <Stat
                label="Range 24h"
                value={modelStats ? `${formatCents(modelStats.low_price_cents)}–${formatCents(modelStats.high_price_cents)}` : "—"}
                className="col-span-2 sm:col-span-1"
              />
            </div>
            <div className="grid gap-6 lg:grid-cols-2">
              <Panel title="Depth" description="Capacity available today at or below each price (cents per diem)">
                <DepthChart book={b} />
              </Panel>
              <Panel title="Price levels" description="Cheapest first; buyers are routed from the top" bodyClassName="pt-2 sm:pt-3">
                {b.levels.length === 0 ? (
                  <EmptyState title="Nobody sells this model right now">Requests for it answer 503 until an offer is posted.</EmptyState>
                ) : (
                  <LevelsTable book={b} />
                )}
              </Panel>
            </div>
          </>
        )}
      </QueryState>
      <PriceHistoryPanel model={model} />
      <Panel title="Recent trades" bodyClassName="pt-2 sm:pt-3">
        <QueryState query={trades} loadingLabel="Loading recent trades" errorTitle="Couldn't load recent trades">
          {(t) => <TradesTable trades={t.data} showModel={false} />}
        </QueryState>
      </Panel>
    </div>
  );
}

/**
 * Every level with its capacity, the running total and its offer count: all four columns at a desktop width without
 * scrolling (the panel has half the row); capacity and cumulative each with one number of decimals (format.ts).
 */
function LevelsTable({ book }: { book: BookView }) {
  let running = 0n;
  const levels = book.levels.map((level) => {
    running += microsOf(level.remaining_diem);
    return { ...level, remaining: microsOf(level.remaining_diem), cumulative: running };
  });
  const max = running || 1n;
  const capacity = diemColumn(levels.map((l) => l.remaining));
  const cumulative = diemColumn(levels.map((l) => l.cumulative));
  return (
    <Table caption={`Order book for ${book.model}`}>
      <thead>
        <tr>
          <Th>Price</Th>
          <Th className="text-right">Capacity</Th>
          <Th className="text-right">Cumulative</Th>
          <Th className="hidden text-right sm:table-cell">Offers</Th>
        </tr>
      </thead>
      <tbody>
        {levels.map((level) => (
          <tr key={level.price_cents} className="relative">
            <Td className="font-semibold text-emerald-700 tabular-nums dark:text-emerald-400">
              {formatCents(level.price_cents)}
              <span className="sr-only"> per diem</span>
            </Td>
            <Td className="relative text-right tabular-nums">
              <span
                aria-hidden="true"
                className="absolute inset-y-1 right-0 rounded-sm bg-emerald-500/10"
                style={{ width: `${Number((level.remaining * 1000n) / max) / 10}%` }}
              />
              <span className="relative">{capacity(level.remaining)}</span>
            </Td>
            <Td className="text-right text-zinc-600 tabular-nums">{cumulative(level.cumulative)}</Td>
            <Td className="hidden text-right tabular-nums sm:table-cell">{level.offers}</Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
