"use client";

import { useState, type ReactNode } from "react";
import { PriceBadge } from "@/components/market/market-parts";
import { useModelOffers, type ModelOfferList, type ModelOfferView } from "@/components/market/queries";
import { Badge } from "@/components/ui/badge";
import { Panel } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatCents, formatDateTime, formatDiem, formatInteger, formatPercent, formatUsd, plural } from "@/components/ui/format";
import { QueryState } from "@/components/ui/query-state";
import { Table, Td, Th } from "@/components/ui/table";

type Window = "1h" | "24h";
const WINDOWS: { id: Window; label: string }[] = [
  { id: "24h", label: "24 h" },
  { id: "1h", label: "1 h" },
];

/**
 * The model's providers (GET /v1/market/models/{id}/offers): each live offer with its price, what it has served
 * (measured from real traffic over the chosen window), what its supplier declares, and what the platform's fidelity
 * probes found. A table from the sm breakpoint up, one card per offer on a phone. Figures from too few requests show
 * as "—" with the count, never as noise.
 */
export function ProviderTable({ model, initial }: { model: string; initial: ModelOfferList | null }) {
  const offers = useModelOffers(model, initial);
  const [window, setWindow] = useState<Window>("24h");
  return (
    <Panel
      title="Providers"
      description="Each live offer: price, what it served (measured from real traffic), what its supplier declares, and the platform's probe checks"
      actions={<WindowSwitch value={window} onChange={setWindow} />}
      bodyClassName="pt-2 sm:pt-3"
    >
      <QueryState query={offers} loadingLabel="Loading the providers" errorTitle="Couldn't load the providers">
        {(list) =>
          list.data.length === 0 ? (
            <EmptyState title="No live offers for this model">Suppliers post offers from the Supply page.</EmptyState>
          ) : (
            <>
              <div className="hidden sm:block">
                <ProvidersTable list={list} window={window} />
              </div>
              <ul aria-label={`Providers for ${list.model}`} className="flex flex-col gap-3 sm:hidden">
                {list.data.map((offer) => (
                  <ProviderCard key={offer.id} offer={offer} window={window} />
                ))}
              </ul>
              <p className="mt-3 text-xs text-zinc-600 dark:text-zinc-400">
                Measured over the last {window === "1h" ? "hour" : "24 hours"} in 5-minute steps; a window needs{" "}
                {plural(list.min_requests, "request")} before its figures show. Uptime is the share of forwards the supplier answered;
                latency is the upstream&apos;s, from the forward sent to the answer read. Declarations are the supplier&apos;s word; probes
                are the platform&apos;s check.
              </p>
            </>
          )
        }
      </QueryState>
    </Panel>
  );
}

function WindowSwitch({ value, onChange }: { value: Window; onChange: (w: Window) => void }) {
  return (
    <div
      role="radiogroup"
      aria-label="Measurement window"
      className="inline-flex rounded-lg border border-zinc-200 p-0.5 dark:border-zinc-700"
    >
      {WINDOWS.map((w) => (
        <button
          key={w.id}
          type="button"
          role="radio"
          aria-checked={value === w.id}
          onClick={() => onChange(w.id)}
          className={
            value === w.id
              ? "rounded-md bg-zinc-900 px-2.5 py-1 text-xs font-medium text-white dark:bg-zinc-100 dark:text-zinc-900"
              : "rounded-md px-2.5 py-1 text-xs font-medium text-zinc-700 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800"
          }
        >
          {w.label}
        </button>
      ))}
    </div>
  );
}

function ProvidersTable({ list, window }: { list: ModelOfferList; window: Window }) {
  return (
    <Table caption={`Providers for ${list.model}`}>
      <thead>
        <tr>
          <Th>Provider</Th>
          <Th className="text-right">Price</Th>
          <Th className="text-right">Latency p50 / p95</Th>
          <Th className="text-right">Throughput</Th>
          <Th className="text-right">Uptime</Th>
          <Th className="text-right">Disputes</Th>
          <Th>Declared</Th>
          <Th>Probes</Th>
        </tr>
      </thead>
      <tbody>
        {list.data.map((offer) => {
          const m = offer.measured[window];
          return (
            <tr key={offer.id} className="align-top">
              <Td>
                <ProviderName offer={offer} />
              </Td>
              <Td className="text-right tabular-nums">
                <span className="font-medium">{formatCents(offer.price_cents)}</span> <PriceBadge cents={offer.price_cents} />
                <span className="block text-xs text-zinc-600 dark:text-zinc-400">{perMTok(offer)}</span>
                <span className="block text-xs text-zinc-600 dark:text-zinc-400">{formatDiem(offer.capacity_left_diem)} left today</span>
              </Td>
              <Td className="text-right tabular-nums">
                <Measured
                  offer={offer}
                  window={window}
                  value={m.latency_ms && `${formatInteger(m.latency_ms.p50)} / ${formatInteger(m.latency_ms.p95)} ms`}
                />
              </Td>
              <Td className="text-right tabular-nums">
                <Measured offer={offer} window={window} value={m.throughput_tps !== null && `${m.throughput_tps.toFixed(1)} tok/s`} />
              </Td>
              <Td className="text-right tabular-nums">
                <Measured offer={offer} window={window} value={m.success_rate !== null && formatPercent(m.success_rate)} />
              </Td>
              <Td className="text-right tabular-nums">
                <Measured offer={offer} window={window} value={m.dispute_rate !== null && formatPercent(m.dispute_rate)} />
              </Td>
              <Td>
                <Declared offer={offer} />
              </Td>
              <Td>
                <ProbeState offer={offer} />
              </Td>
            </tr>
          );
        })}
      </tbody>
    </Table>
  );
}

function ProviderCard({ offer, window }: { offer: ModelOfferView; window: Window }) {
  const m = offer.measured[window];
  const headingId = `provider-${offer.id}`;
  return (
    <li aria-labelledby={headingId} className="rounded-lg border border-zinc-200 p-3 text-sm dark:border-zinc-800">
      <div className="flex items-start justify-between gap-2">
        <h3 id={headingId} className="min-w-0">
          <ProviderName offer={offer} />
        </h3>
        <span className="text-right tabular-nums">
          <span className="font-medium">{formatCents(offer.price_cents)}</span> <PriceBadge cents={offer.price_cents} />
        </span>
      </div>
      <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
        {perMTok(offer)} · {formatDiem(offer.capacity_left_diem)} left today
      </p>
      <dl className="mt-2 grid grid-cols-2 gap-x-3 gap-y-1.5 text-xs">
        <Fact label="Latency p50 / p95">
          <Measured
            offer={offer}
            window={window}
            value={m.latency_ms && `${formatInteger(m.latency_ms.p50)} / ${formatInteger(m.latency_ms.p95)} ms`}
          />
        </Fact>
        <Fact label="Throughput">
          <Measured offer={offer} window={window} value={m.throughput_tps !== null && `${m.throughput_tps.toFixed(1)} tok/s`} />
        </Fact>
        <Fact label="Uptime">
          <Measured offer={offer} window={window} value={m.success_rate !== null && formatPercent(m.success_rate)} />
        </Fact>
        <Fact label="Disputes">
          <Measured offer={offer} window={window} value={m.dispute_rate !== null && formatPercent(m.dispute_rate)} />
        </Fact>
      </dl>
      <div className="mt-2 flex flex-col gap-1.5">
        <Declared offer={offer} />
        <ProbeState offer={offer} />
      </div>
    </li>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-zinc-600 dark:text-zinc-400">{label}</dt>
      <dd className="tabular-nums">{children}</dd>
    </div>
  );
}

function ProviderName({ offer }: { offer: ModelOfferView }) {
  return (
    <span className="flex flex-col gap-0.5">
      <span className="flex flex-wrap items-center gap-1.5">
        {offer.supplier_name && <span className="font-medium break-words">{offer.supplier_name}</span>}
        <span
          className={offer.supplier_name ? "font-mono text-xs text-zinc-600 dark:text-zinc-400" : "font-mono text-xs font-medium"}
          title={offer.supplier}
        >
          {offer.supplier.slice(0, 12)}…
        </span>
        {!offer.on_book && <Badge tone="amber">Off the book</Badge>}
      </span>
      <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400" title={`Offer ${offer.id}`}>
        offer {offer.id.slice(0, 8)}
      </span>
    </span>
  );
}

/** A measured figure, or "—" and how many requests the window holds when they are too few to say. */
function Measured({ offer, window, value }: { offer: ModelOfferView; window: Window; value: string | false | null }) {
  const m = offer.measured[window];
  if (m.sufficient && value) return <>{value}</>;
  return (
    <span className="text-zinc-600 dark:text-zinc-400" title={`${plural(m.requests, "request")} in the window: too few to say`}>
      — <span className="text-xs">({formatInteger(m.requests)})</span>
    </span>
  );
}

function perMTok(offer: ModelOfferView): string {
  const cached = offer.usd_per_mtok.cached_prompt;
  return `${formatUsd(offer.usd_per_mtok.prompt)} in${cached === null ? "" : ` (${formatUsd(cached)} cached)`} · ${formatUsd(offer.usd_per_mtok.completion)} out / 1M`;
}

function Declared({ offer }: { offer: ModelOfferView }) {
  const { quantization, data_policy: policy, context_tokens, max_output_tokens, prompt_caching: caching } = offer.declared;
  const keepsNothing = !policy.retains_prompts && !policy.trains_on_prompts;
  return (
    <span className="flex flex-wrap items-center gap-1">
      <Badge tone={quantization === "unknown" ? "neutral" : "sky"}>
        {quantization === "unknown" ? "quantization unknown" : quantization}
      </Badge>
      <Badge tone={keepsNothing ? "green" : "amber"}>
        {keepsNothing ? "No retention" : policy.trains_on_prompts ? "Retains, trains" : "Retains prompts"}
      </Badge>
      {caching.caches_prompts && <Badge tone="sky">Caches prompts ({formatRetention(caching.retention_seconds)})</Badge>}
      <span className="text-xs text-zinc-600 dark:text-zinc-400">
        {compactTokens(context_tokens)} ctx · {compactTokens(max_output_tokens)} out
      </span>
    </span>
  );
}

/** A retention as a buyer reads it: "5 min", "1 h", "90 s". */
function formatRetention(seconds: number): string {
  if (seconds % 3600 === 0) return `${formatInteger(seconds / 3600)} h`;
  if (seconds % 60 === 0) return `${formatInteger(seconds / 60)} min`;
  return `${formatInteger(seconds)} s`;
}

function compactTokens(n: number): string {
  return n >= 1000 && n % 1000 === 0 ? `${formatInteger(n / 1000)}k` : formatInteger(n);
}

function ProbeState({ offer }: { offer: ModelOfferView }) {
  const { probe } = offer;
  if (probe.status === "unprobed") return <Badge>Not probed yet</Badge>;
  // Probation: a new or changed offer serves no buyer until its first probe set passes.
  if (probe.status === "verifying") return <Badge tone="amber">Verifying</Badge>;
  if (probe.status === "unverified") return <Badge>Unverified (probes could not run)</Badge>;
  if (probe.status === "passing")
    return (
      <span className="flex flex-wrap items-center gap-1">
        <Badge tone="green">Probes pass</Badge>
        {probe.probed_at && <span className="text-xs text-zinc-600 dark:text-zinc-400">{formatDateTime(probe.probed_at)}</span>}
      </span>
    );
  return (
    <div className="flex max-w-xs flex-col gap-1 whitespace-normal">
      <span className="flex flex-wrap items-center gap-1">
        <Badge tone="red">Flagged</Badge>
        {probe.delisted && <Badge tone="amber">Delisted</Badge>}
      </span>
      {probe.reason && <span className="text-xs">{probe.reason}</span>}
      {probe.evidence.length > 0 && (
        <details className="text-xs">
          <summary className="cursor-pointer text-zinc-700 underline underline-offset-2 dark:text-zinc-300">
            Evidence ({probe.evidence.length})
          </summary>
          <ul className="mt-1 flex flex-col gap-1">
            {probe.evidence.map((e, i) => (
              <li key={i} className="rounded bg-zinc-50 p-1.5 break-words dark:bg-zinc-800">
                <span className="font-medium">{e.probe}</span> · {e.check}
                {e.expected !== null && (
                  <span className="block">
                    expected <code className="font-mono">{e.expected}</code>
                  </span>
                )}
                {e.got !== null && (
                  <span className="block">
                    got <code className="font-mono">{e.got}</code>
                  </span>
                )}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
