"use client";

import { useState } from "react";
import { useMarketHistory, type HistoryRange, type MarketHistory } from "@/components/market/queries";
import { BarChart, type ChartPoint } from "@/components/ui/bar-chart";
import { Panel } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDecimalCents, formatDiem, formatUsd, microsOf, plural, shortDateTimeAt, shortDayAt } from "@/components/ui/format";
import { QueryState } from "@/components/ui/query-state";
import { Term } from "@/components/ui/term";

const RANGES: { id: HistoryRange; label: string; name: string; bucket: string }[] = [
  { id: "1h", label: "1H", name: "Last hour", bucket: "5 minutes" },
  { id: "1d", label: "1D", name: "Last day", bucket: "hour" },
  { id: "1w", label: "1W", name: "Last week", bucket: "6 hours" },
];

const TIME = new Intl.DateTimeFormat("en-US", { hour: "2-digit", minute: "2-digit", hour12: false, timeZone: "UTC" });

/** Where the x axis puts a label: quarter hours in the last hour, every 3 hours in a day, midnights in a week. */
const TICK_MS: Record<HistoryRange, number> = { "1h": 15 * 60_000, "1d": 3 * 3_600_000, "1w": 86_400_000 };

/**
 * The server's buckets (GET /v1/market/history) as chart points: bars are the volume in USDC, the line the
 * volume-weighted price in cents per diem. A bucket without trades has no price, so the line breaks there.
 */
export function historyPoints(history: MarketHistory): ChartPoint[] {
  const range = history.range;
  return history.data.map((b) => {
    const at = Date.parse(b.start);
    const label = range === "1w" ? (at % 86_400_000 === 0 ? shortDayAt(at) : TIME.format(at)) : TIME.format(at);
    const when = range === "1h" ? TIME.format(at) : shortDateTimeAt(at);
    return {
      label,
      value: Number(microsOf(b.volume_usdc)),
      line: b.vwap_cents === null ? null : Number(b.vwap_cents),
      tick: at % TICK_MS[range] === 0,
      detail:
        b.trades === 0
          ? `${when} UTC: no trades`
          : `${when} UTC: ${formatUsd(b.volume_usdc)} volume · ${formatDiem(b.burn_diem)} burned · ${plural(b.trades, "trade")} · average ${formatDecimalCents(b.vwap_cents!)} per diem`,
    };
  });
}

export function PriceHistoryPanel({ model }: { model: string }) {
  const [range, setRange] = useState<HistoryRange>("1d");
  const history = useMarketHistory(model, range);
  const current = RANGES.find((r) => r.id === range)!;
  return (
    <Panel
      title="Price and volume history"
      description={
        <>
          Bars: volume in USDC. Line: the <Term term="vwap">volume-weighted price</Term> in ¢ per <Term term="diem" />, broken where nothing
          traded. One bar per {current.bucket}, UTC.
        </>
      }
      actions={<RangeSwitch value={range} onChange={setRange} />}
    >
      <QueryState query={history} loadingLabel="Loading the price history" errorTitle="Couldn't load the price history">
        {(h) =>
          h.data.every((b) => b.trades === 0) ? (
            <EmptyState title={`No trades in the ${current.name.toLowerCase()}`}>
              Each request served on this model adds to its history{range === "1w" ? "." : "; a longer range may show more."}
            </EmptyState>
          ) : (
            <BarChart
              title={`Price and volume history for ${model}, ${current.name.toLowerCase()}`}
              columns={["Time", "Trades"]}
              points={historyPoints(h)}
              formatValue={(v) => formatUsd(BigInt(Math.round(v)), { approx: true })}
              formatLine={(v) => `${Number.isInteger(v) ? v : v.toFixed(1)}¢`}
            />
          )
        }
      </QueryState>
    </Panel>
  );
}

function RangeSwitch({ value, onChange }: { value: HistoryRange; onChange: (range: HistoryRange) => void }) {
  return (
    <div role="group" aria-label="Time range" className="inline-flex rounded-lg border border-zinc-200 p-0.5 dark:border-zinc-700">
      {RANGES.map((r) => (
        <button
          key={r.id}
          type="button"
          aria-pressed={value === r.id}
          title={r.name}
          onClick={() => onChange(r.id)}
          className={
            value === r.id
              ? "min-w-10 rounded-md bg-zinc-900 px-2.5 py-1 text-xs font-medium text-white dark:bg-zinc-100 dark:text-zinc-900"
              : "min-w-10 rounded-md px-2.5 py-1 text-xs font-medium text-zinc-700 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800"
          }
        >
          {r.label}
        </button>
      ))}
    </div>
  );
}
