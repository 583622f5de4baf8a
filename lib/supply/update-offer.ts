import "server-only";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { log } from "@/lib/log";
import type { Features } from "@/lib/supply/features";
import { declaredFields } from "@/lib/supply/declared";
import { findOwnedOffer, getOfferOrThrow } from "@/lib/supply/get-offer";
import { modelsWithListPrices, refreshFeatures, replaceModels, resolveModels, type OfferedModel } from "@/lib/supply/offer-models";
import { probationColumns } from "@/lib/supply/probation";
import type { CheckedOfferView, UpdateOfferInput, UpstreamPricingView } from "@/lib/supply/schemas";
import { checkUpstream, type UpstreamCheckOptions } from "@/lib/supply/upstream-check";
import { decryptCredential, encryptCredential } from "@/lib/upstream/key-encryption";
import { assertUpstreamUrlAllowed, defaultUpstreamPolicy } from "@/lib/upstream/ssrf";

/**
 * Changes price, capacity, models, credentials, status (active ↔ paused) or what the supplier declares (quantization,
 * data policy, limits: null clears a limit). A new URL, key or model
 * list is checked against the upstream first; new credentials that pass also end any cooldown, and with a new model
 * list they make a probe-flagged offer due at the next probe round (lib/probes/backoff.ts) and put the offer in
 * probation (lib/supply/probation.ts: off the book until a probe set passes; a flagged offer stays off it when probes
 * cannot run, so a new key is no way out of a flag). A new URL
 * needs the key again (400 naming upstreamApiKey otherwise).
 * Withdrawn offers are final (409).
 */
export async function updateOffer(
  supplierId: string,
  offerId: string,
  patch: UpdateOfferInput,
  options: UpstreamCheckOptions = {},
): Promise<CheckedOfferView> {
  const offer = await findOwnedOffer(supplierId, offerId);
  if (offer.status === "withdrawn") throw withdrawnConflict();

  const credentialsChanged = patch.upstream_base_url !== undefined || patch.upstream_api_key !== undefined;
  const models = patch.models ? await resolveModels(patch.models) : null;
  let upstreamPricing: UpstreamPricingView[] | undefined;
  let served: Map<string, Features> | undefined;
  let baseUrl = offer.upstreamBaseUrl;
  let offered: OfferedModel[] = [];
  if (credentialsChanged || models) {
    if (patch.upstream_base_url !== undefined) {
      baseUrl = assertUpstreamUrlAllowed(patch.upstream_base_url, options.policy ?? defaultUpstreamPolicy());
      assertKeyResentForNewUrl(baseUrl, offer.upstreamBaseUrl, patch.upstream_api_key);
    }
    const apiKey = patch.upstream_api_key ?? decryptCredential(offer.upstreamKeyCiphertext);
    offered = models ?? (await modelsWithListPrices(offer.models));
    ({ pricing: upstreamPricing, served } = await checkUpstream({ baseUrl, apiKey }, offered, options));
  }

  const probation = credentialsChanged || models ? await probationColumns() : null;
  const keepFlag = probation?.probeStatus === "unverified" && offer.probeStatus === "flagged";
  await db.$transaction(async (tx) => {
    const updated = await tx.offer.updateMany({
      where: { id: offer.id, supplierId, status: { not: "withdrawn" } },
      data: {
        ...(patch.price_cents !== undefined && { priceCents: patch.price_cents }),
        ...(patch.daily_capacity !== undefined && { dailyCapacityMicroDiem: patch.daily_capacity }),
        ...(patch.status !== undefined && { status: patch.status }),
        ...declaredFields(patch),
        ...(credentialsChanged && {
          upstreamBaseUrl: baseUrl,
          ...(patch.upstream_api_key !== undefined && { upstreamKeyCiphertext: encryptCredential(patch.upstream_api_key) }),
          consecutiveFailures: 0,
          unhealthyUntil: null,
        }),
        // What it serves changed (checked above): a flagged offer waiting out its probe backoff is due again.
        ...((credentialsChanged || models) && { probeDueAt: null }),
        ...(probation && !keepFlag && probation),
        updatedAt: new Date(),
      },
    });
    if (updated.count === 0) throw withdrawnConflict();
    if (models) await replaceModels(tx, offer.id, models, served!);
    else if (credentialsChanged) await refreshFeatures(tx, offer.id, offered, served!);
  });
  log.info("offer updated", { offerId: offer.id, supplierId, fields: Object.keys(patch).filter((k) => k !== "upstream_api_key") });
  return { ...(await getOfferOrThrow(supplierId, offer.id)), ...(upstreamPricing && { upstream_pricing: upstreamPricing }) };
}

/**
 * The stored key goes only to the URL it was given for: a new URL needs the key again, so a stolen session
 * cannot point the offer at its own server and collect the key from the upstream check.
 */
function assertKeyResentForNewUrl(newBaseUrl: string, storedBaseUrl: string, apiKey: string | undefined) {
  if (apiKey === undefined && newBaseUrl !== storedBaseUrl) {
    throw new AppError(
      "invalid_request",
      "Invalid request body: upstream_api_key: required when upstream_base_url changes (the stored key is only ever sent to the URL it was given for).",
      { details: { param: "upstream_api_key" } },
    );
  }
}

function withdrawnConflict() {
  return new AppError("conflict", "This offer was withdrawn; withdrawn offers cannot change. Post a new offer instead.");
}
