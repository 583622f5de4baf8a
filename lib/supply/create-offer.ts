import "server-only";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import { getOfferOrThrow } from "@/lib/supply/get-offer";
import { declaredFields } from "@/lib/supply/declared";
import { offerModelRow, resolveModels } from "@/lib/supply/offer-models";
import { probationColumns } from "@/lib/supply/probation";
import type { CheckedOfferView, CreateOfferInput } from "@/lib/supply/schemas";
import { checkUpstream, type UpstreamCheckOptions } from "@/lib/supply/upstream-check";
import { encryptCredential } from "@/lib/upstream/key-encryption";
import { assertUpstreamUrlAllowed, defaultUpstreamPolicy } from "@/lib/upstream/ssrf";

/**
 * Posting an offer: "N diem per UTC day of these models at P cents per diem", served from the supplier's own
 * OpenAI-compatible upstream. The upstream is checked first (lib/supply/upstream-check.ts), so an offer that cannot
 * serve is refused, not listed. The upstream key is stored encrypted and leaves lib/supply only to the router and the
 * probes. It starts in probation (lib/supply/probation.ts): off the book until its first probe set passes.
 */

/** Offers an account may have that are not withdrawn (withdrawn ones stay as history). */
export const MAX_OPEN_OFFERS_PER_ACCOUNT = 50;

/** Posts an offer after checking its URL (SSRF) and its upstream (reachable, key accepted, models served). */
export async function createOffer(
  supplierId: string,
  input: CreateOfferInput,
  options: UpstreamCheckOptions = {},
): Promise<CheckedOfferView> {
  const baseUrl = assertUpstreamUrlAllowed(input.upstream_base_url, options.policy ?? defaultUpstreamPolicy());
  const models = await resolveModels(input.models);
  const open = await db.offer.count({ where: { supplierId, status: { not: "withdrawn" } } });
  if (open >= MAX_OPEN_OFFERS_PER_ACCOUNT) {
    throw new AppError("unprocessable", `An account can have at most ${MAX_OPEN_OFFERS_PER_ACCOUNT} offers that are not withdrawn.`);
  }
  const { pricing: upstreamPricing, served } = await checkUpstream({ baseUrl, apiKey: input.upstream_api_key }, models, options);
  const offer = await db.offer.create({
    data: {
      supplierId,
      upstreamBaseUrl: baseUrl,
      upstreamKeyCiphertext: encryptCredential(input.upstream_api_key),
      priceCents: input.price_cents,
      dailyCapacityMicroDiem: input.daily_capacity,
      ...declaredFields(input),
      ...(await probationColumns()),
      models: { create: models.map((m) => offerModelRow(m, served)) },
    },
    select: { id: true },
  });
  log.info("offer posted", { offerId: offer.id, supplierId, priceCents: input.price_cents, models: models.map((m) => m.id) });
  return { ...(await getOfferOrThrow(supplierId, offer.id)), upstream_pricing: upstreamPricing };
}
