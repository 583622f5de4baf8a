import "server-only";
import { loadOfferViews } from "@/lib/supply/offer-views";
import type { OfferList } from "@/lib/supply/schemas";

/** The caller's offers, newest first, with today's capacity use, earnings and health. */
export async function listOffers(
  supplierId: string,
  filter: { status?: "active" | "paused" | "withdrawn" } = {},
  now: Date = new Date(),
): Promise<OfferList> {
  return { object: "list", data: await loadOfferViews({ supplierId, ...(filter.status ? { status: filter.status } : {}) }, now) };
}
