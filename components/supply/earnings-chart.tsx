"use client";

import { useDailyEarnings, useOffers, type DailyEarnings, type OfferView } from "@/components/supply/queries";
import { BarChart } from "@/components/ui/bar-chart";
import { Panel } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDay, formatUsd, microsOf, plural } from "@/components/ui/format";
import { QueryState } from "@/components/ui/query-state";
import { Table, Td, Th } from "@/components/ui/table";

const DAYS = 30;

/** "30¢ offer · mistral-31-24b" (delisted offers too: their earnings stay in the chart). */
function offerName(id: string, offers: OfferView[] | undefined): string {
  const offer = offers?.find((o) => o.id === id);
  if (!offer) return `Offer ${id.slice(0, 8)}`;
  return `${offer.price_cents}¢ offer · ${offer.models.map((m) => m.id).join(", ")}${offer.status === "withdrawn" ? " (delisted)" : ""}`;
}

/**
 * Earnings over time (GET /v1/supply/earnings/daily): a bar per UTC day of the last 30, what each offer earned in
 * the window, and the day-by-offer table the bars are made of, all exact and from the earnings ledger.
 */
export function EarningsChartPanel() {
  const daily = useDailyEarnings(DAYS);
  const offers = useOffers();
  return (
    <Panel title="Earnings over time" description={`Your share per UTC day and per offer, last ${DAYS} days`}>
      <QueryState query={daily} loadingLabel="Loading your earnings over time" errorTitle="Couldn't load your earnings over time">
        {({ data }) =>
          data.length === 0 ? (
            <EmptyState title="No earnings in the last 30 days">Each day your offers serve requests gets a bar here.</EmptyState>
          ) : (
            <EarningsOverTime rows={data} offers={offers.data?.data} />
          )
        }
      </QueryState>
    </Panel>
  );
}

function lastDays(days: number): string[] {
  const today = new Date();
  return Array.from({ length: days }, (_, i) =>
    new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - (days - 1 - i))).toISOString().slice(0, 10),
  );
}

function EarningsOverTime({ rows, offers }: { rows: DailyEarnings[]; offers: OfferView[] | undefined }) {
  const byDay = new Map<string, DailyEarnings[]>();
  const byOffer = new Map<string, { earned: bigint; requests: number }>();
  for (const r of rows) {
    byDay.set(r.day, [...(byDay.get(r.day) ?? []), r]);
    const o = byOffer.get(r.offer) ?? { earned: 0n, requests: 0 };
    o.earned += microsOf(r.earned);
    o.requests += r.requests;
    byOffer.set(r.offer, o);
  }
  const total = rows.reduce((sum, r) => sum + microsOf(r.earned), 0n);
  const requests = rows.reduce((sum, r) => sum + r.requests, 0);
  const perOffer = [...byOffer.entries()].sort((a, b) => (b[1].earned > a[1].earned ? 1 : b[1].earned < a[1].earned ? -1 : 0));
  const totalText = formatUsd(total);
  const newestFirst = [...rows].reverse();

  return (
    <div className="flex flex-col gap-5">
      <p className="text-sm">
        <strong className="text-lg tabular-nums">{totalText}</strong>
        <span className="text-zinc-600 dark:text-zinc-400">
          {" "}
          over {DAYS} days · {plural(requests, "request")}
        </span>
      </p>
      <BarChart
        title={`Earnings per day: ${totalText} over ${DAYS} days`}
        columns={["Day", "Earned"]}
        formatValue={(v) => formatUsd(BigInt(Math.round(v)), { approx: true })}
        points={lastDays(DAYS).map((day) => {
          const entries = byDay.get(day) ?? [];
          const earned = entries.reduce((sum, e) => sum + microsOf(e.earned), 0n);
          const parts = entries.map((e) => `${offerName(e.offer, offers)} ${formatUsd(e.earned)}`);
          return {
            label: formatDay(day),
            value: Number(earned),
            detail: `${formatDay(day)}: ${formatUsd(earned)} · ${plural(
              entries.reduce((n, e) => n + e.requests, 0),
              "request",
            )}${parts.length > 1 ? ` (${parts.join("; ")})` : ""}`,
          };
        })}
      />
      <ul aria-label="Earnings per offer" className="flex flex-col gap-3">
        {perOffer.map(([id, o]) => {
          const share = total > 0n ? Number((o.earned * 1000n) / total) / 10 : 0;
          return (
            <li key={id} className="flex flex-col gap-1">
              <div className="flex flex-wrap items-baseline justify-between gap-x-3 text-sm">
                <span className="min-w-0 break-words">{offerName(id, offers)}</span>
                <span className="whitespace-nowrap tabular-nums">
                  <strong>{formatUsd(o.earned)}</strong>{" "}
                  <span className="text-zinc-600 dark:text-zinc-400">· {plural(o.requests, "request")}</span>
                </span>
              </div>
              <div aria-hidden="true" className="h-2 w-full overflow-hidden rounded-full bg-zinc-100 dark:bg-zinc-800">
                <div className="h-full rounded-full bg-emerald-600" style={{ width: `${Math.max(share, o.earned > 0n ? 1 : 0)}%` }} />
              </div>
            </li>
          );
        })}
      </ul>
      <div className="hidden sm:block">
        <Table caption="Earnings per day and offer">
          <thead>
            <tr>
              <Th>Day</Th>
              <Th>Offer</Th>
              <Th className="text-right">Requests</Th>
              <Th className="text-right">Earned</Th>
            </tr>
          </thead>
          <tbody>
            {newestFirst.map((r) => (
              <tr key={`${r.day}-${r.offer}`}>
                <Td>{formatDay(r.day)}</Td>
                <Td>{offerName(r.offer, offers)}</Td>
                <Td className="text-right tabular-nums">{r.requests}</Td>
                <Td className="text-right font-medium tabular-nums">{formatUsd(r.earned)}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
      </div>
      <ul
        aria-label="Earnings per day and offer"
        className="flex flex-col divide-y divide-zinc-100 border-y border-zinc-100 sm:hidden dark:divide-zinc-800 dark:border-zinc-800"
      >
        {newestFirst.map((r) => (
          <li key={`${r.day}-${r.offer}`} className="flex flex-col gap-0.5 py-2 text-sm">
            <div className="flex items-baseline justify-between gap-3">
              <span className="text-zinc-600 dark:text-zinc-400">{formatDay(r.day)}</span>
              <strong className="whitespace-nowrap tabular-nums">{formatUsd(r.earned)}</strong>
            </div>
            <div className="flex items-baseline justify-between gap-3">
              <span className="min-w-0 break-words">{offerName(r.offer, offers)}</span>
              <span className="whitespace-nowrap text-zinc-600 dark:text-zinc-400">{plural(r.requests, "request")}</span>
            </div>
          </li>
        ))}
      </ul>
    </div>
  );
}
