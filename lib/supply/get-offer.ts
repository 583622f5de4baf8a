import "server-only";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { loadOfferViews } from "@/lib/supply/offer-views";
import type { OfferView } from "@/lib/supply/schemas";
import { UUID_PATTERN } from "@/lib/wire";

/**
 * One offer of the caller's: another account's id, an unknown id and a malformed id are all the same 404, so an
 * offer's existence is never told to anyone but its supplier.
 */

/** One of the caller's offers as the wire shows it. */
export async function getOfferOrThrow(supplierId: string, offerId: string, now: Date = new Date()): Promise<OfferView> {
  if (!UUID_PATTERN.test(offerId)) throw offerNotFound();
  const [view] = await loadOfferViews({ supplierId, id: offerId }, now);
  if (!view) throw offerNotFound();
  return view;
}

/** The offer's row with its models and the encrypted upstream key, for the operations that change it; 404 as above. */
export async function findOwnedOffer(supplierId: string, offerId: string) {
  if (!UUID_PATTERN.test(offerId)) throw offerNotFound();
  const offer = await db.offer.findFirst({ where: { id: offerId, supplierId }, include: { models: true } });
  if (!offer) throw offerNotFound();
  return offer;
}

function offerNotFound() {
  return new AppError("not_found", "No such offer among yours.");
}
