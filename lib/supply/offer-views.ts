import "server-only";
import { db } from "@/lib/db/client";
import { probeViews } from "@/lib/supply/probe-evidence";
import { formatMicros } from "@/lib/money";
import { FEATURES, featuresOf } from "@/lib/supply/features";
import { nextUtcMidnight, remainingMicroDiem, utcDayKey } from "@/lib/supply/capacity";
import { disputeWindowStart, healthView, isOnBook } from "@/lib/supply/offer-health";
import type { DeclaredView, OfferView } from "@/lib/supply/schemas";

/**
 * A supplier's offers as the wire shows them (OfferView): today's capacity use, earnings, health, and whether the
 * offer is on the book. The upstream key's ciphertext is never read here (omitted from the query), so no view can
 * carry it.
 */

const MAX_LISTED_OFFERS = 200;

export async function loadOfferViews(
  where: { supplierId: string; id?: string; status?: "active" | "paused" | "withdrawn" },
  now: Date,
): Promise<OfferView[]> {
  const offers = await db.offer.findMany({
    where,
    orderBy: [{ createdAt: "desc" }, { id: "asc" }],
    take: MAX_LISTED_OFFERS,
    omit: { upstreamKeyCiphertext: true },
    include: {
      models: {
        select: {
          modelId: true,
          upstreamModel: true,
          supportsTools: true,
          supportsJsonSchema: true,
          supportsVision: true,
          model: { select: { contextTokens: true, maxOutputTokens: true } },
        },
        orderBy: { modelId: "asc" },
      },
      days: { where: { day: { gte: disputeWindowStart(now) } } },
    },
  });
  if (offers.length === 0) return [];
  // Running sums on the offer's days (svc_clear_batch adds each clear's share to its day): a row per offer and day,
  // not one per clear.
  const earnings = await db.offerDay.groupBy({
    by: ["offerId"],
    where: { offerId: { in: offers.map((o) => o.id) } },
    _sum: { earnedMicros: true, clears: true },
  });
  const earned = new Map(earnings.map((e) => [e.offerId, e._sum]));
  const probes = await probeViews(offers);
  const resetsAt = nextUtcMidnight(now).toISOString();
  return offers.map((o) => {
    const today = o.days.find((d) => utcDayKey(d.day) === utcDayKey(now));
    const use = {
      dailyCapacityMicroDiem: o.dailyCapacityMicroDiem,
      burnedMicroDiem: today?.burnedMicroDiem ?? 0n,
      heldMicroDiem: today?.heldMicroDiem ?? 0n,
    };
    const remaining = remainingMicroDiem(use);
    return {
      id: o.id,
      status: o.status,
      price_cents: o.priceCents,
      daily_capacity: formatMicros(o.dailyCapacityMicroDiem),
      upstream_base_url: o.upstreamBaseUrl,
      models: o.models.map((m) => ({
        id: m.modelId,
        upstream_model: m.upstreamModel,
        features: FEATURES.filter((f) => featuresOf(m)[f]),
      })),
      today: {
        day: utcDayKey(now),
        burned_diem: formatMicros(use.burnedMicroDiem),
        held_diem: formatMicros(use.heldMicroDiem),
        remaining_diem: formatMicros(remaining),
        resets_at: resetsAt,
      },
      earnings_usdc: formatMicros(earned.get(o.id)?.earnedMicros ?? 0n),
      clears: earned.get(o.id)?.clears ?? 0,
      health: healthView(o, now, o.days),
      declared: declaredView(o),
      probe: probes.get(o.id)!,
      on_book: isOnBook(o, use, now),
      created_at: o.createdAt.toISOString(),
      updated_at: o.updatedAt.toISOString(),
    };
  });
}

/**
 * What the supplier declares. A limit it did not declare is the smallest of its models' (the one that holds for every
 * model it serves); the public offers list (lib/market/quality/offers.ts) shows each model's.
 */
function declaredView(o: {
  quantization: DeclaredView["quantization"];
  retainsPrompts: boolean;
  trainsOnPrompts: boolean;
  contextTokens: number | null;
  maxOutputTokens: number | null;
  streams: boolean;
  billsCancelledInFull: boolean;
  cachesPrompts: boolean;
  cacheRetentionSeconds: number;
  models: { model: { contextTokens: number; maxOutputTokens: number } }[];
}): DeclaredView {
  const smallest = (pick: (m: { contextTokens: number; maxOutputTokens: number }) => number) =>
    Math.min(...o.models.map((m) => pick(m.model)));
  return {
    quantization: o.quantization,
    data_policy: { retains_prompts: o.retainsPrompts, trains_on_prompts: o.trainsOnPrompts },
    context_tokens: o.contextTokens ?? smallest((m) => m.contextTokens),
    max_output_tokens: o.maxOutputTokens ?? smallest((m) => m.maxOutputTokens),
    streaming: { streams: o.streams, bills_cancelled_in_full: o.billsCancelledInFull },
    prompt_caching: { caches_prompts: o.cachesPrompts, retention_seconds: o.cacheRetentionSeconds },
  };
}
