"use client";

import { useQuery } from "@tanstack/react-query";
import { useDailySpend, usageKey, type DailySpend, type UsagePage } from "@/components/buyer/queries";
import { BarChart } from "@/components/ui/bar-chart";
import { api } from "@/lib/browser/api";
import { Panel } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { Amount } from "@/components/ui/amount";
import { formatDay, formatDiem, formatUsd, microsOf, percentColumn, plural, usdColumn } from "@/components/ui/format";
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
  const total = days.reduce((sum, d) => sum + microsOf(d.cost), 0n);
  const requests = days.reduce((sum, d) => sum + d.requests, 0);
  const totalText = formatUsd(total);
  return (
    <figure className="flex flex-col gap-3">
      <p className="text-sm">
        <strong className="text-lg tabular-nums">
          <Amount value={total} />
        </strong>
        <span className="text-zinc-600 dark:text-zinc-400">
          {" "}
          over {days.length} days · {plural(requests, "request")}
        </span>
      </p>
      <BarChart
        title={`Spend per day: ${totalText} over ${days.length} days`}
        columns={["Day", "Spend"]}
        formatValue={(v) => formatUsd(BigInt(Math.round(v)), { approx: true })}
        points={days.map((d) => ({
          label: formatDay(d.day),
          value: Number(microsOf(d.cost)),
          detail: `${formatDay(d.day)}: ${formatUsd(d.cost)} · ${plural(d.requests, "request")} · ${formatDiem(d.burn)} burned`,
        }))}
      />
    </figure>
  );
}

/** Every request of the last `days` days (up to 1,000), newest first, read page by page from /v1/account/usage. */
function useRecentUsage(days: number) {
  return useQuery({
    queryKey: [...usageKey, "recent", days],
    queryFn: async () => {
      const since = Date.now() - days * 86_400_000;
      const rows: UsagePage["data"] = [];
      let cursor = "";
      for (let page = 0; page < 5; page++) {
        const res = await api<UsagePage>(`/v1/account/usage?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        const recent = res.data.filter((r) => new Date(r.created_at).getTime() >= since);
        rows.push(...recent);
        if (!res.next_cursor || recent.length < res.data.length) return { rows, complete: true };
        cursor = res.next_cursor;
      }
      return { rows, complete: false };
    },
  });
}

/** Spend per model over the window: one bar each, largest first, with the exact amount and its share. */
export function SpendByModelPanel() {
  const usage = useRecentUsage(DAYS);
  return (
    <Panel title="Spend per model" description={`Last ${DAYS} days, from your requests`}>
      <QueryState query={usage} loadingLabel="Loading your spend per model" errorTitle="Couldn't load your spend per model">
        {({ rows, complete }) => {
          const byModel = new Map<string, { cost: bigint; requests: number }>();
          for (const r of rows) {
            const m = byModel.get(r.model) ?? { cost: 0n, requests: 0 };
            m.cost += microsOf(r.cost);
            m.requests += 1;
            byModel.set(r.model, m);
          }
          const models = [...byModel.entries()].sort((a, b) => (b[1].cost > a[1].cost ? 1 : b[1].cost < a[1].cost ? -1 : 0));
          const total = models.reduce((sum, [, m]) => sum + m.cost, 0n);
          if (models.length === 0) return <EmptyState title="No spend yet">Each model you use gets a bar here.</EmptyState>;
          // One number of decimals for every bar's amount and share (format.ts, policy 3): 38.0% beside 34.3%.
          const shares = new Map(models.map(([model, m]) => [model, total > 0n ? Number((m.cost * 1000n) / total) / 1000 : 0]));
          const cost = usdColumn(models.map(([, m]) => m.cost));
          const percent = percentColumn([...shares.values()]);
          return (
            <div className="flex flex-col gap-3">
              <ul aria-label="Spend per model" className="flex flex-col gap-3">
                {models.map(([model, m]) => {
                  const share = shares.get(model)!;
                  return (
                    <li
                      key={model}
                      className="flex flex-col gap-1"
                      aria-label={`${model}: ${cost(m.cost)}, ${percent(share)} of spend, ${plural(m.requests, "request")}`}
                    >
                      <div className="flex flex-wrap items-baseline justify-between gap-x-3 text-sm">
                        <span className="font-mono text-xs break-all">{model}</span>
                        <span className="tabular-nums">
                          <strong>{cost(m.cost)}</strong>{" "}
                          <span className="text-zinc-600 dark:text-zinc-400">
                            · {percent(share)} · {plural(m.requests, "request")}
                          </span>
                        </span>
                      </div>
                      <div aria-hidden="true" className="h-2 w-full overflow-hidden rounded-full bg-zinc-100 dark:bg-zinc-800">
                        <div
                          className="h-full rounded-full bg-emerald-600"
                          style={{ width: `${Math.max(share * 100, m.cost > 0n ? 1 : 0)}%` }}
                        />
                      </div>
                    </li>
                  );
                })}
              </ul>
              {!complete && <p className="text-xs text-zinc-600 dark:text-zinc-400">From your latest 1,000 requests.</p>}
            </div>
          );
        }}
      </QueryState>
    </Panel>
  );
}
