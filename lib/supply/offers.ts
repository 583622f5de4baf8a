import "server-only";
import type { z } from "zod";
import { db, type Tx } from "@/lib/db";
import { AppError, type AppErrorCode } from "@/lib/errors";
import { log } from "@/lib/log";
import { formatMicros } from "@/lib/money";
import { nextUtcMidnight, remainingMicroDiem, utcDay, utcDayKey } from "@/lib/supply/capacity";
import { decryptCredential, encryptCredential } from "@/lib/upstream/key-encryption";
import { featuresOf, FEATURES, type Features } from "@/lib/router/features";
import { disputeWindowStart, healthView, isHealthy } from "@/lib/supply/offer-health";
import { assertUpstreamUrlAllowed, defaultUpstreamPolicy, type UpstreamPolicy } from "@/lib/upstream/ssrf";
import {
  listUpstreamModels,
  UpstreamError,
  type OfferCredentials,
  type Resolver,
  type UpstreamFeatures,
  type UpstreamPricing,
} from "@/lib/upstream/client";
import type {
  CheckedOfferView,
  CreateOfferInput,
  OfferList,
  OfferModels,
  OfferView,
  PricingComparison,
  UpdateOfferInput,
  UpstreamPricingView,
} from "@/lib/supply/schemas";
import { formatListPrice, UUID_PATTERN } from "@/lib/wire";

/**
 * Supplier offers: "N diem per UTC day of these models at P cents per diem", served from the
 * supplier's own OpenAI-compatible upstream. Posting (or changing credentials, URL or models) calls
 * the upstream's GET /models with the key, so an offer that cannot serve is refused, not listed.
 * The upstream key is stored encrypted and never leaves this module except to the router.
 */

/** What posting or re-checking an offer can refuse with, when its upstream fails the check. */
export const UPSTREAM_CHECK_ERRORS = ["upstream_url_forbidden", "upstream_unreachable", "upstream_auth_failed", "upstream_model_missing"] as const satisfies AppErrorCode[];

/** Offers an account may have that are not withdrawn (withdrawn ones stay as history). */
export const MAX_OPEN_OFFERS_PER_ACCOUNT = 50;
const MAX_LISTED_OFFERS = 200;

/** Test and dev seams: the SSRF policy and DNS resolver used for the upstream check. */
export type UpstreamCheckOptions = { policy?: UpstreamPolicy; resolver?: Resolver; timeoutMs?: number };

// ─── operations ──────────────────────────────────────────────────────────────

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
      models: { create: models.map((m) => offerModelRow(m, served)) },
    },
    select: { id: true },
  });
  log.info("offer posted", { offerId: offer.id, supplierId, priceCents: input.price_cents, models: models.map((m) => m.id) });
  return { ...(await getOfferOrThrow(supplierId, offer.id)), upstream_pricing: upstreamPricing };
}

/** The caller's offers, newest first, with today's capacity use, earnings and health. */
export async function listOffers(
  supplierId: string,
  filter: { status?: "active" | "paused" | "withdrawn" } = {},
  now: Date = new Date(),
): Promise<OfferList> {
  return { object: "list", data: await loadOfferViews({ supplierId, ...(filter.status ? { status: filter.status } : {}) }, now) };
}

/** One of the caller's offers; another account's id, an unknown id and a malformed id are all 404. */
export async function getOfferOrThrow(supplierId: string, offerId: string, now: Date = new Date()): Promise<OfferView> {
  if (!UUID_PATTERN.test(offerId)) throw offerNotFound();
  const [view] = await loadOfferViews({ supplierId, id: offerId }, now);
  if (!view) throw offerNotFound();
  return view;
}

/**
 * Changes price, capacity, models, credentials or status (active ↔ paused). A new URL, key or model
 * list is checked against the upstream first; new credentials that pass also end any cooldown. A new URL
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

  await db.$transaction(async (tx) => {
    const updated = await tx.offer.updateMany({
      where: { id: offer.id, supplierId, status: { not: "withdrawn" } },
      data: {
        ...(patch.price_cents !== undefined && { priceCents: patch.price_cents }),
        ...(patch.daily_capacity !== undefined && { dailyCapacityMicroDiem: patch.daily_capacity }),
        ...(patch.status !== undefined && { status: patch.status }),
        ...(credentialsChanged && {
          upstreamBaseUrl: baseUrl,
          ...(patch.upstream_api_key !== undefined && { upstreamKeyCiphertext: encryptCredential(patch.upstream_api_key) }),
          consecutiveFailures: 0,
          unhealthyUntil: null,
        }),
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

/** Withdraws an offer: off the book for good, the row kept for history. Idempotent. */
export async function withdrawOffer(supplierId: string, offerId: string): Promise<OfferView> {
  const offer = await findOwnedOffer(supplierId, offerId);
  if (offer.status !== "withdrawn") {
    await db.offer.update({ where: { id: offer.id }, data: { status: "withdrawn" } });
    log.info("offer withdrawn", { offerId: offer.id, supplierId });
  }
  return getOfferOrThrow(supplierId, offer.id);
}

// ─── internals ───────────────────────────────────────────────────────────────

type OfferedModel = {
  id: string;
  upstreamModel: string;
  inputMicroDiemPerMTok: bigint;
  outputMicroDiemPerMTok: bigint;
  /** What the catalog model can do. */
  features: Features;
};

/** Catalog models named by the supplier, each with the upstream's own name (default: the same id). */
async function resolveModels(refs: z.infer<typeof OfferModels>): Promise<OfferedModel[]> {
  const wanted = refs.map((ref) => (typeof ref === "string" ? { id: ref, upstreamModel: ref } : { id: ref.id, upstreamModel: ref.upstream_model ?? ref.id }));
  const seen = new Set<string>();
  for (const [index, m] of wanted.entries()) {
    if (seen.has(m.id)) {
      throw new AppError("invalid_request", `Invalid request body: models.${index}: model "${m.id}" is listed twice.`, {
        details: { param: `models.${index}` },
      });
    }
    seen.add(m.id);
  }
  const catalog = await db.model.findMany({ where: { id: { in: [...seen] }, active: true } });
  const byId = new Map(catalog.map((m) => [m.id, m]));
  const unknown = wanted.findIndex((m) => !byId.has(m.id));
  if (unknown >= 0) {
    throw new AppError(
      "invalid_request",
      `Invalid request body: models.${unknown}: "${wanted[unknown].id}" is not a model of this marketplace; see GET /v1/models.`,
      { details: { param: `models.${unknown}` } },
    );
  }
  return wanted.map((m) => {
    const model = byId.get(m.id)!;
    return {
      ...m,
      inputMicroDiemPerMTok: model.inputMicroDiemPerMTok,
      outputMicroDiemPerMTok: model.outputMicroDiemPerMTok,
      features: featuresOf(model),
    };
  });
}

async function modelsWithListPrices(models: { modelId: string; upstreamModel: string }[]): Promise<OfferedModel[]> {
  const catalog = await db.model.findMany({ where: { id: { in: models.map((m) => m.modelId) } } });
  const byId = new Map(catalog.map((m) => [m.id, m]));
  return models.map((m) => ({
    id: m.modelId,
    upstreamModel: m.upstreamModel,
    inputMicroDiemPerMTok: byId.get(m.modelId)!.inputMicroDiemPerMTok,
    outputMicroDiemPerMTok: byId.get(m.modelId)!.outputMicroDiemPerMTok,
    features: featuresOf(byId.get(m.modelId)!),
  }));
}

/**
 * GET {base}/models with the key: refuses an unreachable upstream, a refused key, or a missing model. Returns
 * the upstream's prices next to ours, and the features served per model: the catalog's, less any the
 * upstream says the model lacks (an upstream that says nothing is taken to serve what the model can do).
 */
async function checkUpstream(
  credentials: OfferCredentials,
  models: OfferedModel[],
  options: UpstreamCheckOptions,
): Promise<{ pricing: UpstreamPricingView[]; served: Map<string, Features> }> {
  let result;
  try {
    result = await listUpstreamModels(credentials, {
      policy: options.policy,
      resolver: options.resolver,
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    });
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    if (error.kind === "forbidden_address" || error.kind === "invalid_url") {
      throw new AppError("upstream_url_forbidden", error.message, { details: { param: "upstream_base_url" } });
    }
    throw new AppError("upstream_unreachable", `GET ${credentials.baseUrl}/models failed: ${error.message}`, {
      details: { param: "upstream_base_url" },
    });
  }
  if (!result.ok) {
    if (result.reason === "auth_failed") {
      throw new AppError(
        "upstream_auth_failed",
        `The upstream refused the API key (HTTP ${result.status} from GET ${credentials.baseUrl}/models).`,
        { details: { param: "upstream_api_key", upstream_status: result.status } },
      );
    }
    const what = result.reason === "bad_status" ? `answered HTTP ${result.status}` : "did not answer with a model list";
    throw new AppError("upstream_unreachable", `GET ${credentials.baseUrl}/models ${what}; is this an OpenAI-compatible base URL?`, {
      details: { param: "upstream_base_url", upstream_status: result.status },
    });
  }
  const served = new Map(result.models.map((m) => [m.id, m]));
  const missing = models.filter((m) => !served.has(m.upstreamModel));
  if (missing.length > 0) {
    const names = missing.map((m) => m.upstreamModel);
    throw new AppError(
      "upstream_model_missing",
      `The upstream does not list ${names.map((n) => `"${n}"`).join(", ")} in GET /models; name the upstream's own model id with {"id", "upstream_model"}.`,
      { details: { param: "models", missing_models: names } },
    );
  }
  const pricing = models.map((m) => {
    const upstream = served.get(m.upstreamModel)!.pricing;
    const list = { inputMicroDiemPerMTok: m.inputMicroDiemPerMTok, outputMicroDiemPerMTok: m.outputMicroDiemPerMTok };
    return {
      model: m.id,
      upstream_model: m.upstreamModel,
      list_price: formatListPrice(list),
      upstream_price: upstream ? formatListPrice(upstream) : null,
      comparison: comparePricing(upstream, list),
    };
  });
  const features = new Map(models.map((m) => [m.id, servedFeatures(m.features, served.get(m.upstreamModel)!.features)]));
  return { pricing, served: features };
}

/** What the model can do, less what the upstream says it lacks (silence keeps the feature). */
function servedFeatures(model: Features, says: UpstreamFeatures): Features {
  return {
    tools: model.tools && says.tools !== false,
    json_schema: model.json_schema && says.json_schema !== false,
    vision: model.vision && says.vision !== false,
  };
}

function offerModelRow(m: OfferedModel, served: Map<string, Features>) {
  const f = served.get(m.id) ?? m.features;
  return { modelId: m.id, upstreamModel: m.upstreamModel, supportsTools: f.tools, supportsJsonSchema: f.json_schema, supportsVision: f.vision };
}

/**
 * New credentials may serve other features than the old ones did. A model a concurrent change has just removed
 * from the offer is no longer there to refresh (updateMany, not update: that is not an error).
 */
async function refreshFeatures(tx: Tx, offerId: string, models: OfferedModel[], served: Map<string, Features>) {
  for (const m of models) {
    const { supportsTools, supportsJsonSchema, supportsVision } = offerModelRow(m, served);
    await tx.offerModel.updateMany({ where: { offerId, modelId: m.id }, data: { supportsTools, supportsJsonSchema, supportsVision } });
  }
}

function comparePricing(upstream: UpstreamPricing | null, list: UpstreamPricing): PricingComparison {
  if (!upstream) return "unknown";
  const input = upstream.inputMicroDiemPerMTok - list.inputMicroDiemPerMTok;
  const output = upstream.outputMicroDiemPerMTok - list.outputMicroDiemPerMTok;
  if (input === 0n && output === 0n) return "same";
  if (input <= 0n && output <= 0n) return "upstream_lower";
  if (input >= 0n && output >= 0n) return "upstream_higher";
  return "mixed";
}

async function replaceModels(tx: Tx, offerId: string, models: OfferedModel[], served: Map<string, Features>) {
  await tx.offerModel.deleteMany({ where: { offerId } });
  await tx.offerModel.createMany({ data: models.map((m) => ({ offerId, ...offerModelRow(m, served) })) });
}

async function findOwnedOffer(supplierId: string, offerId: string) {
  if (!UUID_PATTERN.test(offerId)) throw offerNotFound();
  const offer = await db.offer.findFirst({ where: { id: offerId, supplierId }, include: { models: true } });
  if (!offer) throw offerNotFound();
  return offer;
}

async function loadOfferViews(
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
        select: { modelId: true, upstreamModel: true, supportsTools: true, supportsJsonSchema: true, supportsVision: true },
        orderBy: { modelId: "asc" },
      },
      days: { where: { day: { gte: disputeWindowStart(now) } } },
    },
  });
  if (offers.length === 0) return [];
  const earnings = await db.clear.groupBy({
    by: ["offerId"],
    where: { offerId: { in: offers.map((o) => o.id) } },
    _sum: { supplierMicros: true },
    _count: { _all: true },
  });
  const earned = new Map(earnings.map((e) => [e.offerId, e]));
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
      earnings_usdc: formatMicros(earned.get(o.id)?._sum.supplierMicros ?? 0n),
      clears: earned.get(o.id)?._count._all ?? 0,
      health: healthView(o, now, o.days),
      on_book: o.status === "active" && isHealthy(o, now) && remaining > 0n,
      created_at: o.createdAt.toISOString(),
      updated_at: o.updatedAt.toISOString(),
    };
  });
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

function offerNotFound() {
  return new AppError("not_found", "No such offer among yours.");
}

function withdrawnConflict() {
  return new AppError("conflict", "This offer was withdrawn; withdrawn offers cannot change. Post a new offer instead.");
}
