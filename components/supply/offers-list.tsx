"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { offersKey, useOffers, type OfferView } from "@/components/supply/queries";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, Panel } from "@/components/ui/card";
import { Dialog } from "@/components/ui/dialog";
import { EmptyState } from "@/components/ui/empty-state";
import { Field } from "@/components/ui/field";
import { formatDateTime, formatDiem, formatInteger, formatUsd, microsOf, priceVsList } from "@/components/ui/format";
import { QueryState } from "@/components/ui/query-state";
import { api } from "@/lib/browser/api";
import { describeError } from "@/lib/browser/errors";

export function OffersList() {
  const offers = useOffers();
  const [editing, setEditing] = useState<OfferView | null>(null);
  const [withdrawing, setWithdrawing] = useState<OfferView | null>(null);
  return (
    <Panel title="Your offers" description="Capacity resets at 00:00 UTC. Offers are routed cheapest first, then oldest first at the same price.">
      <QueryState query={offers} loadingLabel="Loading your offers" errorTitle="Couldn't load your offers">
        {({ data }) => {
          const open = data.filter((o) => o.status !== "withdrawn");
          const withdrawn = data.length - open.length;
          return open.length === 0 ? (
            <EmptyState title="No offers yet">Post an offer below to start selling your upstream&apos;s spare capacity.</EmptyState>
          ) : (
            <div className="flex flex-col gap-3">
              {open.map((offer) => (
                <OfferCard key={offer.id} offer={offer} onEdit={() => setEditing(offer)} onWithdraw={() => setWithdrawing(offer)} />
              ))}
              {withdrawn > 0 && <p className="text-xs text-zinc-500">{withdrawn} withdrawn offer{withdrawn === 1 ? "" : "s"} kept for history.</p>}
            </div>
          );
        }}
      </QueryState>
      <EditOfferDialog offer={editing} onClose={() => setEditing(null)} />
      <WithdrawOfferDialog offer={withdrawing} onClose={() => setWithdrawing(null)} />
    </Panel>
  );
}

function offerStatus(offer: OfferView): { label: string; tone: "green" | "amber" | "neutral" | "red" } {
  if (offer.status === "withdrawn") return { label: "Withdrawn", tone: "neutral" };
  if (offer.status === "paused") return { label: "Paused", tone: "neutral" };
  if (offer.health.status === "cooling_down") return { label: "Cooling down", tone: "red" };
  if (microsOf(offer.today.remainingDiem) <= 0n) return { label: "Sold out today", tone: "amber" };
  return { label: "On the book", tone: "green" };
}

function isLoopback(url: string): boolean {
  try {
    const host = new URL(url).hostname;
    return host === "127.0.0.1" || host === "localhost" || host === "[::1]" || host.endsWith(".localhost");
  } catch {
    return false;
  }
}

export function offerLabel(offer: OfferView): string {
  return `Offer ${offer.priceCents}¢ per diem, ${offer.models.map((m) => m.id).join(", ")}`;
}

function OfferCard({ offer, onEdit, onWithdraw }: { offer: OfferView; onEdit: () => void; onWithdraw: () => void }) {
  const queryClient = useQueryClient();
  const status = offerStatus(offer);
  const capacity = microsOf(offer.dailyCapacity);
  const used = capacity - microsOf(offer.today.remainingDiem);
  const usedPct = capacity > 0n ? Number((used * 1000n) / capacity) / 10 : 0;
  const toggle = useMutation({
    mutationFn: () => api<OfferView>(`/v1/supply/offers/${offer.id}`, { method: "PATCH", body: { status: offer.status === "paused" ? "active" : "paused" } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: offersKey }),
  });

  return (
    <Card className="p-4 shadow-none" aria-label={offerLabel(offer)} role="article">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="flex min-w-0 flex-col gap-1.5">
          <div className="flex flex-wrap items-center gap-2">
            <span className="text-lg font-semibold tabular-nums">{offer.priceCents}¢</span>
            <span className="text-sm text-zinc-500">/ diem · {priceVsList(offer.priceCents)}</span>
            <Badge tone={status.tone}>{status.label}</Badge>
          </div>
          <div className="flex flex-wrap gap-1">
            {offer.models.map((m) => (
              <span key={m.id} className="rounded bg-zinc-100 px-1.5 py-0.5 font-mono text-xs dark:bg-zinc-800">
                {m.id}
              </span>
            ))}
          </div>
          <p className="flex flex-wrap items-center gap-2 text-xs text-zinc-500">
            <span className="max-w-full truncate font-mono" title={offer.upstreamBaseUrl}>
              {offer.upstreamBaseUrl}
            </span>
            {isLoopback(offer.upstreamBaseUrl) && <Badge tone="sky">local upstream: a stand-in, not a model</Badge>}
          </p>
        </div>
        <div className="flex flex-wrap gap-2">
          <Button variant="secondary" size="sm" onClick={onEdit} aria-label={`Edit offer at ${offer.priceCents}¢`}>
            Edit
          </Button>
          <Button variant="secondary" size="sm" loading={toggle.isPending} onClick={() => toggle.mutate()}>
            {offer.status === "paused" ? "Resume" : "Pause"}
          </Button>
          <Button variant="ghost" size="sm" className="text-red-700 dark:text-red-300" onClick={onWithdraw}>
            Withdraw
          </Button>
        </div>
      </div>

      <dl className="mt-4 grid grid-cols-2 gap-x-4 gap-y-3 text-sm sm:grid-cols-4">
        <div className="col-span-2 flex flex-col gap-1.5">
          <dt className="text-xs text-zinc-500">Capacity left today</dt>
          <dd className="tabular-nums">
            <strong>{formatDiem(offer.today.remainingDiem)}</strong> <span className="text-zinc-500">of {formatDiem(offer.dailyCapacity)}</span>
          </dd>
          <dd>
            <div className="h-1.5 w-full overflow-hidden rounded-full bg-zinc-100 dark:bg-zinc-800" role="progressbar" aria-label="Capacity used today" aria-valuemin={0} aria-valuemax={100} aria-valuenow={usedPct}>
              <div className="h-full rounded-full bg-emerald-500" style={{ width: `${Math.min(100, usedPct)}%` }} />
            </div>
          </dd>
        </div>
        <div className="flex flex-col gap-1">
          <dt className="text-xs text-zinc-500">Burned today</dt>
          <dd className="tabular-nums">{formatDiem(offer.today.burnedDiem)}</dd>
        </div>
        <div className="flex flex-col gap-1">
          <dt className="text-xs text-zinc-500">Earned</dt>
          <dd className="tabular-nums">
            {formatUsd(offer.earningsUsdc)} <span className="text-xs text-zinc-500">· {formatInteger(offer.clears)} requests</span>
          </dd>
        </div>
      </dl>
      <p className="mt-3 text-xs text-zinc-500">
        {offer.health.status === "healthy" ? (
          <>Upstream healthy{offer.health.lastSuccessAt && <> · last served {formatDateTime(offer.health.lastSuccessAt)}</>}</>
        ) : (
          <span className="text-red-700 dark:text-red-300">
            Upstream failing ({offer.health.consecutiveFailures} in a row{offer.health.lastFailureReason && `: ${offer.health.lastFailureReason}`}); off the book until{" "}
            {formatDateTime(offer.health.cooldownUntil!)}
          </span>
        )}
      </p>
      {toggle.isError && <Alert tone="error" className="mt-3">{describeError(toggle.error)}</Alert>}
    </Card>
  );
}

function EditOfferDialog({ offer, onClose }: { offer: OfferView | null; onClose: () => void }) {
  return (
    <Dialog open={offer !== null} onClose={onClose} title="Edit offer" description="Changes apply to the next request routed to this offer.">
      {offer && <EditOfferForm key={offer.id} offer={offer} onClose={onClose} />}
    </Dialog>
  );
}

function EditOfferForm({ offer, onClose }: { offer: OfferView; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [price, setPrice] = useState(String(offer.priceCents));
  const [capacity, setCapacity] = useState(formatDiem(offer.dailyCapacity, { unit: false }).replace(/,/g, ""));
  const save = useMutation({
    mutationFn: (body: Record<string, unknown>) => api<OfferView>(`/v1/supply/offers/${offer.id}`, { method: "PATCH", body }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: offersKey });
      onClose();
    },
  });
  const priceError = !/^\d{1,5}$/.test(price) || Number(price) < 1 || Number(price) > 10_000 ? "Whole cents per diem, 1 to 10000." : null;
  const capacityError = !/^\d{1,7}(\.\d{1,6})?$/.test(capacity) || Number(capacity) <= 0 ? "Diem per day, more than 0." : null;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (priceError || capacityError) return;
    const body: Record<string, unknown> = {};
    if (Number(price) !== offer.priceCents) body.priceCents = Number(price);
    if (microsOf(capacity) !== microsOf(offer.dailyCapacity)) body.dailyCapacity = capacity;
    if (Object.keys(body).length === 0) return onClose();
    save.mutate(body);
  }

  return (
    <form onSubmit={submit} className="flex flex-col gap-4" noValidate>
      <div className="grid gap-4 sm:grid-cols-2">
        <Field label="Price" name="priceCents" inputMode="numeric" suffix="¢ / diem" value={price} onChange={(e) => setPrice(e.target.value.trim())} error={priceError} />
        <Field label="Daily capacity" name="dailyCapacity" inputMode="decimal" suffix="diem" value={capacity} onChange={(e) => setCapacity(e.target.value.trim())} error={capacityError} />
      </div>
      {save.isError && <Alert tone="error">{describeError(save.error)}</Alert>}
      <div className="flex flex-col-reverse gap-2 sm:flex-row sm:justify-end">
        <Button variant="secondary" onClick={onClose}>
          Cancel
        </Button>
        <Button type="submit" loading={save.isPending}>
          Save changes
        </Button>
      </div>
    </form>
  );
}

function WithdrawOfferDialog({ offer, onClose }: { offer: OfferView | null; onClose: () => void }) {
  const queryClient = useQueryClient();
  const withdraw = useMutation({
    mutationFn: (id: string) => api<OfferView>(`/v1/supply/offers/${id}`, { method: "DELETE" }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: offersKey });
      withdraw.reset();
      onClose();
    },
  });
  return (
    <Dialog
      open={offer !== null}
      onClose={() => {
        withdraw.reset();
        onClose();
      }}
      title="Withdraw this offer?"
      description="It leaves the order book for good (pause it instead to come back later). Earnings already made stay yours."
    >
      {withdraw.error && <Alert tone="error">{describeError(withdraw.error)}</Alert>}
      <div className="flex flex-col-reverse gap-2 sm:flex-row sm:justify-end">
        <Button variant="secondary" onClick={onClose}>
          Keep it
        </Button>
        <Button variant="danger" loading={withdraw.isPending} onClick={() => offer && withdraw.mutate(offer.id)}>
          Withdraw offer
        </Button>
      </div>
    </Dialog>
  );
}
