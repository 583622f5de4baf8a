"use client";

import { useQuery } from "@tanstack/react-query";
import type { TradeList, TradeView } from "@/components/market/queries";
import { BarChart, type ChartPoint } from "@/components/ui/bar-chart";
import { Panel } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDiem, formatUsd, microsOf, plural } from "@/components/ui/format";
import { QueryState } from "@/components/ui/query-state";
import { Term } from "@/components/ui/term";
import { api } from "@/lib/browser/api";

const BUCKETS = [
  { ms: 5 * 60_000, upTo: 2 * 3_600_000 },
  { ms: 3_600_000, upTo: 48 * 3_600_000 },
  { ms: 86_400_000, upTo: Infinity },
];

const TIME = new Intl.DateTimeFormat("en-US", { hour: "2-digit", minute: "2-digit", hour12: false, timeZone: "UTC" });
const DAY = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", timeZone: "UTC" });

/**
 * The model's last trades (up to 200, from GET /v1/market/trades) bucketed in time: bars are the volume in
 * USDC, the line the volume-weighted price of the bucket in cents per diem. Derived in the browser from the
 * public trades list, so there is no second source of truth for history.
 */
export function bucketTrades(trades: TradeView[]): ChartPoint[] {
  if (trades.length === 0) return [];
  const times = trades.map((t) => new Date(t.time).getTime());
  const first = Math.min(...times);
  const last = Math.max(...times);
  const size = BUCKETS.find((b) => last - first <= b.upTo)!.ms;
  const start = Math.floor(first / size) * size;
  const count = Math.min(60, Math.floor((last - start) / size) + 1);
  const from = Math.floor(last / size) * size - (count - 1) * size;
  const buckets = Array.from({ length: count }, (_, i) => ({ at: from + i * size, volume: 0n, burn: 0n, priceBurn: 0n, trades: 0 }));
  trades.forEach((t, i) => {
    const index = Math.floor((times[i] - from) / size);
    const b = buckets[index];
    if (!b) return;
    const burn = microsOf(t.burn_diem);
    b.volume += microsOf(t.value_usdc);
    b.burn += burn;
    b.priceBurn += burn * BigInt(t.price_cents);
    b.trades += 1;
  });
  const label = (at: number) => (size >= 86_400_000 ? DAY.format(at) : TIME.format(at));
  return buckets.map((b) => {
    const vwap = b.burn > 0n ? Number((b.priceBurn * 100n) / b.burn) / 100 : null;
    return {
      label: label(b.at),
      value: Number(b.volume),
      line: vwap,
      detail:
        b.trades === 0
          ? `${label(b.at)} UTC: no trades`
          : `${label(b.at)} UTC: ${formatUsd(b.volume)} volume · ${formatDiem(b.burn)} burned · ${plural(b.trades, "trade")} · average ${vwap}¢ per diem`,
    };
  });
}

export function PriceHistoryPanel({ model }: { model: string }) {
  const trades = useQuery({
    queryKey: ["market", "trades", model, "history"],
    queryFn: () => api<TradeList>(`/v1/market/trades?limit=200&model=${encodeURIComponent(model)}`),
    refetchInterval: 15_000,
  });
  return (
    <Panel
      title="Price and volume history"
      description={
        <>
          Bars: volume in USDC. Line: the <Term term="vwap">volume-weighted price</Term> in ¢ per <Term term="diem" />. From the latest 200
          trades, UTC.
        </>
      }
    >
      <QueryState query={trades} loadingLabel="Loading the price history" errorTitle="Couldn't load the price history">
        {(t) =>
          t.data.length === 0 ? (
            <EmptyState title="No trades yet">Each request served on this model adds to its history.</EmptyState>
          ) : (
            <BarChart
              title={`Price and volume history for ${model}`}
              columns={["Time", "Trades"]}
              points={bucketTrades(t.data)}
              formatValue={(v) => formatUsd(BigInt(Math.round(v)), { approx: true })}
              formatLine={(v) => `${Math.round(v)}¢`}
            />
          )
        }
      </QueryState>
    </Panel>
  );
}
