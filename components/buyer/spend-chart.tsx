"use client";

import { useDailySpend, type DailySpend } from "@/components/buyer/queries";
import { Panel } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDay, formatInteger, formatUsd, microsOf } from "@/components/ui/format";
import { QueryState } from "@/components/ui/query-state";

const DAYS = 30;

export function SpendChartPanel() {
  const daily = useDailySpend(DAYS);
  return (
    <Panel title="Spend" description={`USDC per day, last ${DAYS} days (UTC)`}>
      <QueryState query={daily} loadingLabel="Loading your spend" errorTitle="Couldn't load your spend">
        {({ data }) =>
          data.length === 0 ? (
            <EmptyState title="No spend yet">Your daily spend shows up here after your first request.</EmptyState>
          ) : (
            <SpendChart days={fillDays(data, DAYS)} />
          )
        }
      </QueryState>
    </Panel>
  );
}

/** Every day of the window, zero where nothing was spent. */
function fillDays(data: DailySpend[], days: number): DailySpend[] {
  const byDay = new Map(data.map((d) => [d.day, d]));
  const today = new Date();
  const out: DailySpend[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const day = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - i)).toISOString().slice(0, 10);
    out.push(byDay.get(day) ?? { day, requests: 0, cost: "0.000000", burn: "0.000000" });
  }
  return out;
}

function SpendChart({ days }: { days: DailySpend[] }) {
  const width = 600;
  const height = 160;
  const pad = { top: 8, bottom: 22, left: 0, right: 0 };
  const max = days.reduce((m, d) => (microsOf(d.cost) > m ? microsOf(d.cost) : m), 0n) || 1n;
  const slot = (width - pad.left - pad.right) / days.length;
  const barWidth = Math.max(2, slot * 0.7);
  const plot = height - pad.top - pad.bottom;
  const total = days.reduce((s, d) => s + microsOf(d.cost), 0n);
  const requests = days.reduce((s, d) => s + d.requests, 0);
  const totalText = formatUsd(total);

  return (
    <figure className="flex flex-col gap-3">
      <p className="text-sm">
        <strong className="text-lg tabular-nums">{totalText}</strong>
        <span className="text-zinc-500 dark:text-zinc-400"> over {days.length} days · {formatInteger(requests)} requests</span>
      </p>
      <svg viewBox={`0 0 ${width} ${height}`} className="h-40 w-full" role="img" aria-label={`Spend per day: ${totalText} over ${days.length} days`} preserveAspectRatio="none">
        <line x1={0} x2={width} y1={height - pad.bottom} y2={height - pad.bottom} className="stroke-zinc-200 dark:stroke-zinc-700" />
        {days.map((d, i) => {
          const h = Number((microsOf(d.cost) * BigInt(Math.round(plot * 100))) / max) / 100;
          const x = pad.left + i * slot + (slot - barWidth) / 2;
          return (
            <rect key={d.day} x={x} y={height - pad.bottom - h} width={barWidth} height={Math.max(h, d.requests > 0 ? 1.5 : 0)} rx={1.5} className="fill-emerald-500">
              <title>{`${formatDay(d.day)}: ${formatUsd(d.cost)}, ${d.requests} requests`}</title>
            </rect>
          );
        })}
      </svg>
      <div className="flex justify-between text-xs text-zinc-500 dark:text-zinc-400" aria-hidden="true">
        <span>{formatDay(days[0].day)}</span>
        <span>{formatDay(days[days.length - 1].day)}</span>
      </div>
    </figure>
  );
}
