import "server-only";
import { db } from "@/lib/db";
import { AppError } from "@/lib/http/errors";
import { formatMicros } from "@/lib/money";

type Diagnosis = {
  cheapest_posted: number | null;
  at_or_below: bigint;
  healthy_at_or_below: bigint;
  routable_above: string;
  suggested: number | null;
};

/**
 * Explains a 503 in the four X-Svc-* headers and tells the buyer what max price would route:
 * no_offer_at_or_below_max (nothing posted at or below the max), no_healthy_supplier (offers at or below the
 * max are all cooling down after upstream failures), no_capacity (healthy offers at or below the max lack
 * today's capacity for this request's worst case).
 */
export async function noOfferError(input: { modelId: string; maxPriceCents: number; burnMicroDiem: bigint; now: Date }) {
  const day = input.now.toISOString().slice(0, 10);
  const [d] = await db.$queryRaw<Diagnosis[]>`
    WITH o AS (
      SELECT o.price_cents,
             (o.unhealthy_until IS NULL OR o.unhealthy_until <= ${input.now}::timestamptz) AS healthy,
             o.daily_capacity_micro_diem - COALESCE(d.burned_micro_diem, 0) - COALESCE(d.held_micro_diem, 0) AS remaining
      FROM offers o
      JOIN offer_models om ON om.offer_id = o.id AND om.model_id = ${input.modelId}
      LEFT JOIN offer_days d ON d.offer_id = o.id AND d.day = ${day}::date
      WHERE o.status = 'active'
    )
    SELECT MIN(price_cents)::int AS cheapest_posted,
           COUNT(*) FILTER (WHERE price_cents <= ${input.maxPriceCents}) AS at_or_below,
           COUNT(*) FILTER (WHERE price_cents <= ${input.maxPriceCents} AND healthy) AS healthy_at_or_below,
           COALESCE(SUM(remaining) FILTER (WHERE price_cents > ${input.maxPriceCents} AND healthy AND remaining > 0), 0)::text AS routable_above,
           MIN(price_cents) FILTER (WHERE price_cents > ${input.maxPriceCents} AND healthy AND remaining >= ${input.burnMicroDiem})::int AS suggested
    FROM o`;

  const code =
    d.at_or_below === 0n ? "no_offer_at_or_below_max" : d.healthy_at_or_below === 0n ? "no_healthy_supplier" : "no_capacity";
  const routableAbove = formatMicros(BigInt(d.routable_above));
  const reason = {
    no_offer_at_or_below_max: `No offer for ${input.modelId} is posted at or below your max price of ${input.maxPriceCents} cents per diem.`,
    no_healthy_supplier: `Every offer for ${input.modelId} at or below ${input.maxPriceCents} cents per diem is cooling down after upstream failures.`,
    no_capacity: `Offers for ${input.modelId} at or below ${input.maxPriceCents} cents per diem have no capacity left today for this request.`,
  }[code];
  const advice =
    d.suggested !== null
      ? ` A max price of ${d.suggested} would route it now (send X-Svc-Max-Cents: ${d.suggested}); ${routableAbove} diem is available above your max.`
      : " No offer above your max could take it either; try again later or lower max_tokens.";

  return new AppError(code, reason + advice, {
    headers: {
      "x-svc-error-code": code,
      "x-svc-buyer-max-cents": String(input.maxPriceCents),
      "x-svc-cheapest-posted-cents": d.cheapest_posted === null ? "" : String(d.cheapest_posted),
      "x-svc-routable-diem-above-max": routableAbove,
    },
    details: {
      buyer_max_cents: input.maxPriceCents,
      cheapest_posted_cents: d.cheapest_posted,
      routable_diem_above_max: routableAbove,
      suggested_max_cents: d.suggested,
    },
  });
}
