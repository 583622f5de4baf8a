import "server-only";
import { db } from "@/lib/db/client";
import { log } from "@/lib/log";
import { findOwnedOffer, getOfferOrThrow } from "@/lib/supply/get-offer";
import type { OfferView } from "@/lib/supply/schemas";

/** Withdraws an offer: off the book for good, the row kept for history. Idempotent. */
export async function withdrawOffer(supplierId: string, offerId: string): Promise<OfferView> {
  const offer = await findOwnedOffer(supplierId, offerId);
  if (offer.status !== "withdrawn") {
    await db.offer.update({ where: { id: offer.id }, data: { status: "withdrawn" } });
    log.info("offer withdrawn", { offerId: offer.id, supplierId });
  }
  return getOfferOrThrow(supplierId, offer.id);
}
