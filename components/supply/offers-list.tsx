"use client";

import { useState, type FormEvent } from "react";
import type { z } from "zod";
import { declaredBody, DeclaredFields, draftOf, retentionProblem, tokensProblem } from "@/components/supply/declared-fields";
import { offersKey, useOffers, type OfferView } from "@/components/supply/queries";
import { Alert } from "@/components/ui/alert";
import { ModelChips } from "@/components/supply/model-chips";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, Panel } from "@/components/ui/card";
import { isDelisted } from "@/components/supply/delisted-offers";
import { Dialog, DialogActions } from "@/components/ui/dialog";
import { EmptyState } from "@/components/ui/empty-state";
import { Field } from "@/components/ui/field";
import { PriceCentsField, usePriceCents } from "@/components/ui/price-cents-field";
import { Amount } from "@/components/ui/amount";
import { formatCents, formatDateTime, formatDiem, formatTokens, microsOf, plural, priceVsList } from "@/components/ui/format";
import { Term } from "@/components/ui/term";
import { QueryState } from "@/components/ui/query-state";
import { useListMutation } from "@/components/ui/use-list-mutation";
import { api } from "@/lib/browser/api";
import { describeError } from "@/lib/browser/errors";
import { dailyCapacityProblem, type UpdateOfferBody } from "@/lib/supply/schemas";

type OfferPatch = z.input<typeof UpdateOfferBody>;

export function OffersList() {
  const offers = useOffers();
  const [editing, setEditing] = useState<OfferView | null>(null);
  const [withdrawing, setWithdrawing] = useState<OfferView | null>(null);
  return (
    <Panel
      title="Your offers"
      description="Capacity resets at 00:00 UTC. Offers are routed cheapest first, then oldest first at the same price."
    >
      <QueryState query={offers} loadingLabel="Loading your offers" errorTitle="Couldn't load your offers">
        {({ data }) => {
          const open = data.filter((o) => !isDelisted(o));
          const withdrawn = data.length - open.length;
          return open.length === 0 ? (
            withdrawn > 0 ? (
              <EmptyState title="No offers on the book">Your delisted offers are below. Post an offer to sell capacity again.</EmptyState>
            ) : (
              <EmptyState title="No offers yet">Post an offer below to start selling your upstream&apos;s spare capacity.</EmptyState>
            )
          ) : (
            <div className="flex flex-col gap-3">
              {open.map((offer) => (
                <OfferCard key={offer.id} offer={offer} onEdit={() => setEditing(offer)} onWithdraw={() => setWithdrawing(offer)} />
              ))}
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
  if (offer.status === "withdrawn") return { label: "Delisted", tone: "neutral" };
  if (offer.status === "paused") return { label: "Paused", tone: "neutral" };
  if (offer.health.status === "cooling_down") return { label: "Cooling down", tone: "red" };
  if (offer.probe.delisted) return { label: "Off the book: probes", tone: "red" };
  if (microsOf(offer.today.remaining_diem) <= 0n) return { label: "Sold out today", tone: "amber" };
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
  return `Offer ${offer.price_cents}¢ per diem, ${offer.models.map((m) => m.id).join(", ")}`;
}

function OfferCard({ offer, onEdit, onWithdraw }: { offer: OfferView; onEdit: () => void; onWithdraw: () => void }) {
  const status = offerStatus(offer);
  const capacity = microsOf(offer.daily_capacity);
  const used = capacity - microsOf(offer.today.remaining_diem);
  const usedPct = capacity > 0n ? Number((used * 1000n) / capacity) / 10 : 0;
  const { mutation: toggle } = useListMutation({
    mutationFn: () =>
      api<OfferView>(`/v1/supply/offers/${offer.id}`, {
        method: "PATCH",
        body: { status: offer.status === "paused" ? "active" : "paused" },
      }),
    invalidates: [offersKey],
  });

  return (
    <Card className="p-4 shadow-none" aria-label={offerLabel(offer)} role="article">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="flex min-w-0 flex-col gap-1.5">
          <div className="flex flex-wrap items-center gap-2">
            <span className="text-lg font-semibold tabular-nums">{formatCents(offer.price_cents)}</span>
            <span className="text-sm text-zinc-600 dark:text-zinc-400">
              / <Term term="diem" /> · {priceVsList(offer.price_cents)}
            </span>
            <Badge tone={status.tone}>{status.label}</Badge>
          </div>
          <ModelChips models={offer.models} />
          <p className="flex flex-wrap items-center gap-2 text-xs text-zinc-600">
            <span className="max-w-full truncate font-mono" title={offer.upstream_base_url}>
              {offer.upstream_base_url}
            </span>
            {isLoopback(offer.upstream_base_url) && <Badge tone="sky">local upstream: a stand-in, not a model</Badge>}
          </p>
        </div>
        <div className="flex flex-wrap gap-2">
          <Button variant="secondary" size="sm" onClick={onEdit} aria-label={`Edit offer at ${offer.price_cents}¢`}>
            Edit
          </Button>
          <Button variant="secondary" size="sm" loading={toggle.isPending} onClick={() => toggle.mutate()}>
            {offer.status === "paused" ? "Resume" : "Pause"}
          </Button>
          <Button
            variant="ghost"
            size="sm"
            className="text-red-700 dark:text-red-300"
            onClick={onWithdraw}
            aria-label={`Delist offer at ${offer.price_cents}¢`}
          >
            Delist
          </Button>
        </div>
      </div>

      <dl className="mt-4 grid grid-cols-2 gap-x-4 gap-y-3 text-sm sm:grid-cols-4">
        <div className="col-span-2 flex flex-col gap-1.5">
          <dt className="text-xs text-zinc-600 dark:text-zinc-400">Capacity left today</dt>
          <dd className="tabular-nums">
            <strong>
              <Amount value={offer.today.remaining_diem} unit="diem" />
            </strong>{" "}
            <span className="text-zinc-600 dark:text-zinc-400">left of {formatDiem(offer.daily_capacity)} a day</span>
            {used > 0n && (
              <span className="text-zinc-600 dark:text-zinc-400">
                {" "}
                · <Amount value={used} unit="diem" /> used
              </span>
            )}
          </dd>
          <dd>
            <div
              className="h-1.5 w-full overflow-hidden rounded-full bg-zinc-100 dark:bg-zinc-800"
              role="progressbar"
              aria-label="Capacity used today"
              aria-valuemin={0}
              aria-valuemax={100}
              aria-valuenow={usedPct}
            >
              <div className="h-full rounded-full bg-emerald-500" style={{ width: `${Math.min(100, usedPct)}%` }} />
            </div>
          </dd>
        </div>
        <div className="flex flex-col gap-1">
          <dt className="text-xs text-zinc-600 dark:text-zinc-400">
            <Term term="burn">Burned</Term> today
          </dt>
          <dd className="tabular-nums">
            <Amount value={offer.today.burned_diem} unit="diem" />
          </dd>
        </div>
        <div className="flex flex-col gap-1">
          <dt className="text-xs text-zinc-600">Earned</dt>
          <dd className="tabular-nums">
            <Amount value={offer.earnings_usdc} />{" "}
            <span className="text-xs text-zinc-600 dark:text-zinc-400">· {plural(offer.clears, "request")}</span>
          </dd>
        </div>
      </dl>
      <p className="mt-3 text-xs text-zinc-600">
        {offer.health.status === "healthy" ? (
          <>Upstream healthy{offer.health.last_success_at && <> · last served {formatDateTime(offer.health.last_success_at)}</>}</>
        ) : (
          <span className="text-red-700 dark:text-red-300">
            Upstream failing ({offer.health.consecutive_failures} in a row
            {offer.health.last_failure_reason && `: ${offer.health.last_failure_reason}`}); off the book until{" "}
            {formatDateTime(offer.health.cooldown_until!)}
          </span>
        )}
      </p>
      <OfferQualityLine offer={offer} />
      {toggle.isError && (
        <Alert tone="error" className="mt-3">
          {describeError(toggle.error)}
        </Alert>
      )}
    </Card>
  );
}

/** What the supplier declared, and what the platform's fidelity probes found (with the evidence when flagged). */
function OfferQualityLine({ offer }: { offer: OfferView }) {
  const { declared, probe } = offer;
  const policy = declared.data_policy;
  return (
    <div className="mt-2 flex flex-col gap-1.5 text-xs text-zinc-600 dark:text-zinc-400">
      <p className="flex flex-wrap items-center gap-1.5">
        <span>Declared:</span>
        <Badge tone="neutral">{declared.quantization === "unknown" ? "quantization unknown" : declared.quantization}</Badge>
        <Badge tone={policy.retains_prompts || policy.trains_on_prompts ? "amber" : "green"}>
          {!policy.retains_prompts && !policy.trains_on_prompts
            ? "keeps no prompts"
            : policy.trains_on_prompts
              ? "keeps and trains on prompts"
              : "keeps prompts"}
        </Badge>
        {declared.prompt_caching.caches_prompts && (
          <Badge tone="neutral">caches prompts, kept {declared.prompt_caching.retention_seconds} s</Badge>
        )}
        <span className="tabular-nums">
          {formatTokens(declared.context_tokens, "context")} · {formatTokens(declared.max_output_tokens, "output tokens")}
        </span>
      </p>
      {probe.status === "flagged" ? (
        <div className="text-red-700 dark:text-red-300">
          <p>
            Flagged by the platform&apos;s fidelity probes{probe.flagged_at && <> on {formatDateTime(probe.flagged_at)}</>}
            {probe.reason && <>: {probe.reason}</>}
            {probe.delisted ? ". Off the book until a probe round passes again." : "."}
          </p>
          {probe.evidence.length > 0 && (
            <details>
              <summary className="cursor-pointer underline underline-offset-2">Evidence ({probe.evidence.length})</summary>
              <ul className="mt-1 flex flex-col gap-1">
                {probe.evidence.map((e, i) => (
                  <li key={i} className="break-words">
                    {e.probe} · {e.check}
                    {e.expected !== null && (
                      <>
                        {" "}
                        · expected <code className="font-mono">{e.expected}</code>
                      </>
                    )}
                    {e.got !== null && (
                      <>
                        {" "}
                        · got <code className="font-mono">{e.got}</code>
                      </>
                    )}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </div>
      ) : (
        <p>
          {probe.status === "passing"
            ? `Fidelity probes pass${probe.probed_at ? ` (last round ${formatDateTime(probe.probed_at)})` : ""}.`
            : "Not probed yet: the platform's fidelity probes run a few times a day."}
        </p>
      )}
    </div>
  );
}

function EditOfferDialog({ offer, onClose }: { offer: OfferView | null; onClose: () => void }) {
  return (
    <Dialog
      open={offer !== null}
      onClose={onClose}
      title="Edit offer"
      description="Changes apply to the next request routed to this offer."
    >
      {offer && <EditOfferForm key={offer.id} offer={offer} onClose={onClose} />}
    </Dialog>
  );
}

function EditOfferForm({ offer, onClose }: { offer: OfferView; onClose: () => void }) {
  const price = usePriceCents(String(offer.price_cents));
  const [capacity, setCapacity] = useState(formatDiem(offer.daily_capacity, { unit: false }).replace(/,/g, ""));
  const before = draftOf(offer.declared);
  const [declared, setDeclared] = useState(before);
  const { mutation: save, close } = useListMutation({
    mutationFn: (body: OfferPatch) => api<OfferView>(`/v1/supply/offers/${offer.id}`, { method: "PATCH", body }),
    invalidates: [offersKey],
    onClose,
  });
  const capacityError = dailyCapacityProblem(capacity);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (
      price.problem ||
      capacityError ||
      tokensProblem(declared.contextTokens) ||
      tokensProblem(declared.maxOutputTokens) ||
      retentionProblem(declared.cacheRetentionSeconds)
    )
      return;
    const body: OfferPatch = { ...declaredBody(declared, before) };
    if (Number(price.value) !== offer.price_cents) body.price_cents = Number(price.value);
    if (microsOf(capacity) !== microsOf(offer.daily_capacity)) body.daily_capacity = capacity;
    if (Object.keys(body).length === 0) return close();
    save.mutate(body);
  }

  return (
    <form onSubmit={submit} className="flex flex-col gap-4" noValidate>
      <div className="grid gap-4 sm:grid-cols-2">
        <PriceCentsField price={price} label="Price" name="price_cents" />
        <Field
          label="Daily capacity"
          name="daily_capacity"
          inputMode="decimal"
          suffix="diem"
          value={capacity}
          onChange={(e) => setCapacity(e.target.value.trim())}
          error={capacityError}
        />
      </div>
      <DeclaredFields draft={declared} onChange={setDeclared} />
      <DialogActions error={save.error} onCancel={close}>
        <Button type="submit" loading={save.isPending}>
          Save changes
        </Button>
      </DialogActions>
    </form>
  );
}

function WithdrawOfferDialog({ offer, onClose }: { offer: OfferView | null; onClose: () => void }) {
  const { mutation: withdraw, close } = useListMutation({
    mutationFn: (id: string) => api<OfferView>(`/v1/supply/offers/${id}`, { method: "DELETE" }),
    invalidates: [offersKey],
    onClose,
  });
  return (
    <Dialog
      open={offer !== null}
      onClose={close}
      title="Delist this offer?"
      description="It leaves the order book for good (pause it instead to come back later). Earnings already made stay yours."
    >
      <DialogActions error={withdraw.error} onCancel={close} cancelLabel="Keep it">
        <Button variant="danger" loading={withdraw.isPending} onClick={() => offer && withdraw.mutate(offer.id)}>
          Delist offer
        </Button>
      </DialogActions>
    </Dialog>
  );
}
