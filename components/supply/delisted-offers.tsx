"use client";

import { useOffers, type OfferView } from "@/components/supply/queries";
import { ModelChips } from "@/components/supply/model-chips";
import { Badge } from "@/components/ui/badge";
import { formatDateTime, formatUsd, plural } from "@/components/ui/format";

/** Off the book for good (withdrawn by the supplier) or until a probe round passes again (delisted by the probes). */
export function isDelisted(offer: OfferView): boolean {
  return offer.status === "withdrawn" || offer.probe.delisted;
}

/**
 * The supplier's delisted offers, kept in a collapsed list under the live ones instead of disappearing: what each
 * was, why it is off the book, and what it earned while listed. Nothing shows while there are none.
 */
export function DelistedOffers() {
  const offers = useOffers();
  const delisted = offers.data?.data.filter(isDelisted) ?? [];
  if (delisted.length === 0) return null;
  return (
    <details className="group rounded-xl border border-zinc-200 bg-white shadow-sm dark:border-zinc-800 dark:bg-zinc-900">
      <summary className="flex cursor-pointer list-none items-center justify-between gap-3 rounded-xl px-4 py-3 text-sm font-medium sm:px-6 [&::-webkit-details-marker]:hidden">
        <span>
          <span aria-hidden="true" className="mr-2 inline-block transition-transform group-open:rotate-90">
            ▸
          </span>
          Delisted offers ({delisted.length})
        </span>
        <span className="text-xs font-normal text-zinc-600 dark:text-zinc-400">Kept for your records</span>
      </summary>
      <ul
        aria-label="Delisted offers"
        className="flex flex-col divide-y divide-zinc-100 border-t border-zinc-100 dark:divide-zinc-800 dark:border-zinc-800"
      >
        {delisted.map((offer) => (
          <DelistedOffer key={offer.id} offer={offer} />
        ))}
      </ul>
    </details>
  );
}

function DelistedOffer({ offer }: { offer: OfferView }) {
  const withdrawn = offer.status === "withdrawn";
  return (
    <li
      className="flex flex-col gap-1.5 px-4 py-3 sm:px-6"
      aria-label={`Delisted offer ${offer.price_cents}¢ per diem, ${offer.models.map((m) => m.id).join(", ")}`}
    >
      <div className="flex flex-wrap items-center gap-2">
        <span className="font-semibold tabular-nums">{offer.price_cents}¢</span>
        <span className="text-sm text-zinc-600 dark:text-zinc-400">/ diem</span>
        <Badge tone={withdrawn ? "neutral" : "red"}>{withdrawn ? "Delisted by you" : "Off the book: probes"}</Badge>
      </div>
      <ModelChips models={offer.models} />
      <p className="text-sm text-zinc-700 dark:text-zinc-300">
        Earned <strong className="tabular-nums">{formatUsd(offer.earnings_usdc)}</strong> from {plural(offer.clears, "request")}.{" "}
        {withdrawn
          ? `Delisted ${formatDateTime(offer.updated_at)}.`
          : `Flagged${offer.probe.flagged_at ? ` ${formatDateTime(offer.probe.flagged_at)}` : ""}${offer.probe.reason ? `: ${offer.probe.reason}` : ""}. It returns to the book when a probe round passes.`}
      </p>
    </li>
  );
}
