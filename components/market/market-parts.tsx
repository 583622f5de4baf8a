"use client";

import Link from "next/link";
import type { MarketModelList, MarketStats, PoolSummary, TradeView } from "@/components/market/queries";
import { Badge } from "@/components/ui/badge";
import { EmptyState } from "@/components/ui/empty-state";
import { Amount } from "@/components/ui/amount";
import {
  diemColumn,
  formatCents,
  formatDecimalCents,
  formatInteger,
  formatPercent,
  formatPricePerDiem,
  formatTime,
  formatUsd,
  microsOf,
  plural,
  priceVsList,
  usdColumn,
} from "@/components/ui/format";
import { Term } from "@/components/ui/term";
import { Stat } from "@/components/ui/stat";
import { Table, Td, Th } from "@/components/ui/table";
import { chargeMicros } from "@/lib/money";

export function PriceBadge({ cents }: { cents: number }) {
  return <Badge tone={cents < 100 ? "green" : cents > 100 ? "amber" : "neutral"}>{priceVsList(cents)}</Badge>;
}

export function StatsRow({ stats, pool }: { stats: MarketStats; pool: PoolSummary }) {
  return (
    <div className="grid grid-cols-2 gap-4 sm:grid-cols-3 lg:grid-cols-6">
      <Stat label="Requests 24h" value={formatInteger(stats.clears)} />
      <Stat label="Volume 24h" value={<Amount value={stats.volume_usdc} />} />
      <Stat
        label="Burned 24h"
        value={<Amount value={stats.volume_diem} unit="diem" />}
        hint={
          <>
            <Term term="burn">Burn</Term> in <Term term="diem" />
          </>
        }
      />
      <Stat
        label="VWAP 24h"
        value={stats.vwap_cents ? formatDecimalCents(stats.vwap_cents) : "—"}
        hint={<Term term="vwap">Volume-weighted, per diem</Term>}
      />
      <Stat label="Available now" value={<Amount value={pool.available_now_diem} unit="diem" />} hint="Capacity left today" />
      <Stat label="Suppliers" value={formatInteger(pool.suppliers)} hint={plural(pool.offers, "active offer")} />
    </div>
  );
}

export function ModelsTable({ models }: { models: MarketModelList }) {
  if (models.data.length === 0) return <EmptyState title="No models in the catalog yet" />;
  const listPrice = usdColumn(models.data.flatMap((m) => [m.list_price.input_diem_per_mtok, m.list_price.output_diem_per_mtok]));
  const remaining = diemColumn(models.data.map((m) => m.remaining_diem));
  return (
    <Table caption="Models">
      <thead>
        <tr>
          <Th>Model</Th>
          <Th className="hidden text-right sm:table-cell">List price / 1M tok</Th>
          <Th className="text-right">Best price</Th>
          <Th className="hidden text-right sm:table-cell">Available today</Th>
          <Th className="hidden text-right sm:table-cell">Offers</Th>
        </tr>
      </thead>
      <tbody>
        {models.data.map((m) => (
          <tr key={m.id} className="group">
            <Td>
              <Link
                href={`/market/${encodeURIComponent(m.id)}`}
                className="font-medium text-zinc-900 group-hover:text-emerald-700 underline underline-offset-2 hover:no-underline dark:text-zinc-100"
              >
                {m.name}
              </Link>
              <span className="block font-mono text-xs text-zinc-600">{m.id}</span>
              <span className="block text-xs text-zinc-600 sm:hidden">
                list {listPrice(m.list_price.input_diem_per_mtok)} in · {listPrice(m.list_price.output_diem_per_mtok)} out
              </span>
            </Td>
            <Td className="hidden text-right text-xs tabular-nums sm:table-cell">
              <span className="block">in {listPrice(m.list_price.input_diem_per_mtok)}</span>
              <span className="block text-zinc-600">out {listPrice(m.list_price.output_diem_per_mtok)}</span>
            </Td>
            <Td className="text-right tabular-nums">
              {m.best_price_cents === null ? (
                <span className="text-zinc-500">no offers</span>
              ) : (
                <span className="flex flex-col items-end gap-1">
                  <span className="font-semibold whitespace-nowrap">{formatPricePerDiem(m.best_price_cents)}</span>
                  <PriceBadge cents={m.best_price_cents} />
                  <span className="text-xs whitespace-nowrap text-zinc-600 dark:text-zinc-400">{perMTokAt(m, m.best_price_cents)}</span>
                </span>
              )}
            </Td>
            <Td className="hidden text-right tabular-nums sm:table-cell">{remaining(m.remaining_diem)}</Td>
            <Td className="hidden text-right tabular-nums sm:table-cell">
              {formatInteger(m.offers)} <span className="text-zinc-500">· {plural(m.suppliers, "supplier")}</span>
            </Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

/**
 * What 1M input and 1M output tokens cost at a price: the charge rule (lib/money.ts chargeMicros) applied to the list
 * price's burn of 1M tokens, so a buyer compares dollars, not cents per diem.
 */
export function perMTokAt(m: { list_price: { input_diem_per_mtok: string; output_diem_per_mtok: string } }, cents: number): string {
  const at = (diem: string) => formatUsd(chargeMicros(microsOf(diem), cents));
  return `${at(m.list_price.input_diem_per_mtok)} in · ${at(m.list_price.output_diem_per_mtok)} out / 1M`;
}

export function TradesTable({ trades, showModel = true }: { trades: TradeView[]; showModel?: boolean }) {
  if (trades.length === 0)
    return <EmptyState title="No trades yet">Each completion clears as one trade at the price of the offer that served it.</EmptyState>;
  const value = usdColumn(trades.map((t) => t.value_usdc));
  const burn = diemColumn(trades.map((t) => t.burn_diem));
  return (
    <Table caption="Recent trades">
      <thead>
        <tr>
          <Th>
            Time <span className="hidden sm:inline">(UTC)</span>
          </Th>
          {showModel && <Th>Model</Th>}
          <Th className="text-right">Price</Th>
          <Th className="hidden text-right sm:table-cell">Burn</Th>
          <Th className="text-right">Value</Th>
        </tr>
      </thead>
      <tbody>
        {trades.map((t, i) => (
          <tr key={`${t.time}-${i}`}>
            <Td className="text-zinc-600 tabular-nums">{formatTime(t.time)}</Td>
            {showModel && <Td className="font-mono text-xs">{t.model}</Td>}
            <Td
              className={`text-right font-medium tabular-nums ${t.price_cents <= 100 ? "text-emerald-700 dark:text-emerald-400" : "text-amber-700"}`}
            >
              {formatCents(t.price_cents)}
            </Td>
            <Td className="hidden text-right tabular-nums sm:table-cell">{burn(t.burn_diem)}</Td>
            <Td className="text-right tabular-nums">{value(t.value_usdc)}</Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

export function PoolSummaryView({ pool }: { pool: PoolSummary }) {
  const used = Math.min(1, pool.utilisation);
  return (
    <div className="flex flex-col gap-4">
      <div>
        <div className="flex items-baseline justify-between text-sm">
          <span className="font-medium">Used today</span>
          <span className="tabular-nums">{formatPercent(used)}</span>
        </div>
        <div
          className="mt-1.5 h-2 overflow-hidden rounded-full bg-zinc-100 dark:bg-zinc-800"
          role="progressbar"
          aria-label="Pool capacity used today"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.round(used * 100)}
        >
          <div className="h-full rounded-full bg-emerald-500" style={{ width: `${used * 100}%` }} />
        </div>
      </div>
      <div className="grid grid-cols-2 gap-4">
        <Stat label="Daily capacity" value={<Amount value={pool.daily_capacity_diem} unit="diem" />} />
        <Stat label="Burned today" value={<Amount value={pool.burned_today_diem} unit="diem" />} />
        <Stat label="Remaining today" value={<Amount value={pool.remaining_today_diem} unit="diem" />} />
        <Stat label="Cooling down" value={formatInteger(pool.offers_cooling_down)} hint="Offers paused after upstream failures" />
      </div>
    </div>
  );
}
