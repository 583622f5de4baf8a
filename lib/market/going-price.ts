import "server-only";
import { env } from "@/lib/env";
import { getDepthByModel, medianPriceCents, type ModelDepth } from "@/lib/market/book";

/**
 * A model's going price (cents per diem): what its routable capacity sells at now, the most the platform pays when
 * it buys from the market itself (fidelity probes, lib/probes/round.ts).
 *
 * It is the capacity-weighted median of the model's book (medianPriceCents: the lowest price at which half of the
 * diem on the book is available, the figure GET /v1/market/pool/summary publishes as median_price_cents), at most
 * DEFAULT_MAX_PRICE_CENTS (what a buyer who set no max pays at most: list price unless the operator changed it); a
 * model with nothing on the book goes at DEFAULT_MAX_PRICE_CENTS. A median, not the best price: one supplier posting
 * a sliver of capacity at 1 cent moves it only with half of the model's diem behind that price, i.e. by really
 * selling there; and an offer priced at 10,000 cents moves it only when half the book sits that high, which the cap
 * bounds anyway. Offers off the book (paused, cooling down, delisted by a probe, sold out today) do not count.
 */
export function goingPriceCents(depth: Pick<ModelDepth, "levels"> | undefined): number {
  const median = depth ? medianPriceCents(depth.levels) : null;
  return Math.min(median ?? env.DEFAULT_MAX_PRICE_CENTS, env.DEFAULT_MAX_PRICE_CENTS);
}

/** The going price of each of `modelIds` at `now`, from one read of the book. */
export async function getGoingPrices(modelIds: Iterable<string>, now: Date): Promise<Map<string, number>> {
  const depth = await getDepthByModel(now);
  return new Map([...new Set(modelIds)].map((id) => [id, goingPriceCents(depth.get(id))]));
}
