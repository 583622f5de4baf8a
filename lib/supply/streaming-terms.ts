import "server-only";
import { processCache } from "@/lib/cache";
import { db } from "@/lib/db/client";

/** What an offer's supplier declares about streaming (offers.streams, offers.bills_cancelled_in_full). */
export type StreamingTerms = { streams: boolean; billsCancelledInFull: boolean };

/** How long a declaration read is reused: an edit reaches the streams that start after it within this. */
export const STREAMING_TERMS_TTL_MS = 10_000;

const terms = processCache<StreamingTerms>("offer-streaming-terms", 10_000);

/**
 * The streaming terms of the offer a stream was reserved on, read once per offer per STREAMING_TERMS_TTL_MS (a stream
 * asks while its upstream call is being made, not before). An offer that says nothing streams and stops billing when
 * its client hangs up.
 */
export async function streamingTerms(offerId: string): Promise<StreamingTerms> {
  const cached = terms.get(offerId);
  if (cached) return cached;
  const row = await db.offer.findUnique({ where: { id: offerId }, select: { streams: true, billsCancelledInFull: true } });
  const value = { streams: row?.streams ?? true, billsCancelledInFull: row?.billsCancelledInFull ?? false };
  terms.set(offerId, value, STREAMING_TERMS_TTL_MS);
  return value;
}
