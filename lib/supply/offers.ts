import { z } from "zod";
import { db, type Tx } from "@/lib/db";
import { AppError } from "@/lib/http/errors";
import { log } from "@/lib/log";
import { formatMicros, parseMicros } from "@/lib/money";
import { nextUtcMidnight, remainingMicroDiem, utcDay, utcDayKey } from "@/lib/supply/capacity";
import { decryptCredential, encryptCredential } from "@/lib/supply/credentials";
import { healthView, isHealthy, type HealthView } from "@/lib/supply/health";
import { assertUpstreamUrlAllowed, defaultUpstreamPolicy, type UpstreamPolicy } from "@/lib/supply/ssrf";
import {
  formatPricing,
  listUpstreamModels,
  UpstreamError,
  type OfferCredentials,
  type Resolver,
  type UpstreamPricing,
} from "@/lib/upstream/client";

/**
 * Supplier offers: "N diem per UTC day of these models at P cents per diem", served from the
 * supplier's own OpenAI-compatible upstream. Posting (or changing credentials, URL or models) calls
 * the upstream's GET /models with the key, so an offer that cannot serve is refused, not listed.
 * The upstream key is stored encrypted and never leaves this module except to the router.
 */

export const MAX_DAILY_CAPACITY_MICRO_DIEM = 1_000_000n * 1_000_000n; // one million diem per day
/** Offers an account may have that are not withdrawn (withdrawn ones stay as history). */
export const MAX_OPEN_OFFERS_PER_ACCOUNT = 50;
const MAX_LISTED_OFFERS = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// ─── input ───────────────────────────────────────────────────────────────────

const PriceCents = z
  .number({ error: "must be an integer number of cents per diem" })
  .int("must be an integer number of cents per diem")
  .min(1, "must be at least 1 cent per diem")
  .max(10_000, "must be at most 10000 cents (100 USDC) per diem");

const DailyCapacity = z
  .string({ error: 'must be a decimal string of diem, e.g. "25" or "12.5"' })
  .max(32)
  .transform((text, ctx) => {
    const micros = parseMicros(text);
    if (micros === null) {
      ctx.addIssue({ code: "custom", message: 'must be a decimal string of diem with at most 6 decimals, e.g. "25" or "12.5"' });
      return z.NEVER;
    }
    if (micros <= 0n) {
      ctx.addIssue({ code: "custom", message: "must be greater than zero" });
      return z.NEVER;
    }
    if (micros > MAX_DAILY_CAPACITY_MICRO_DIEM) {
      ctx.addIssue({ code: "custom", message: `must be at most ${formatMicros(MAX_DAILY_CAPACITY_MICRO_DIEM)} diem per day` });
      return z.NEVER;
    }
    return micros;
  });

const UpstreamBaseUrl = z.string().min(1).max(2048);
// Printable ASCII without spaces: anything else cannot travel in an Authorization header anyway.
const UpstreamApiKey = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[\x21-\x7e]+$/, "must be printable ASCII without spaces");

const ModelRef = z.union([
  z.string().min(1).max(128),
  z.strictObject({ id: z.string().min(1).max(128), upstreamModel: z.string().min(1).max(256).optional() }),
]);
const Models = z.array(ModelRef).min(1, "must name at least one model").max(64);

export const CreateOfferBody = z.strictObject({
  upstreamBaseUrl: UpstreamBaseUrl,
  upstreamApiKey: UpstreamApiKey,
  models: Models,
  priceCents: PriceCents,
  dailyCapacity: DailyCapacity,
});
export type CreateOfferInput = z.infer<typeof CreateOfferBody>;

export const UpdateOfferBody = z
  .strictObject({
    upstreamBaseUrl: UpstreamBaseUrl.optional(),
    upstreamApiKey: UpstreamApiKey.optional(),
    models: Models.optional(),
    priceCents: PriceCents.optional(),
    dailyCapacity: DailyCapacity.optional(),
    status: z.enum(["active", "paused"]).optional(),
  })
  .refine((patch) => Object.values(patch).some((v) => v !== undefined), "name at least one field to change");
export type UpdateOfferInput = z.infer<typeof UpdateOfferBody>;

export const ListOffersQuery = z.strictObject({ status: z.enum(["active", "paused", "withdrawn"]).optional() });

/** Test and dev seams: the SSRF policy and DNS resolver used for the upstream check. */
export type UpstreamCheckOptions = { policy?: UpstreamPolicy; resolver?: Resolver; timeoutMs?: number };

// ─── output ──────────────────────────────────────────────────────────────────

export type OfferView = {
  id: string;
  status: "active" | "paused" | "withdrawn";
  priceCents: number;
  /** Diem per UTC day, decimal string. */
  dailyCapacity: string;
  upstreamBaseUrl: string;
  models: { id: string; upstreamModel: string }[];
  /** Today's (UTC) use, diem decimal strings; capacity resets at `resetsAt`. */
  today: { day: string; burnedDiem: string; heldDiem: string; remainingDiem: string; resetsAt: string };
  /** Sum of this offer's clears' supplier share, USDC decimal string. */
  earningsUsdc: string;
  clears: number;
  health: HealthView;
  /** Whether buyers can be routed to it right now: active, healthy and with capacity left today. */
  onBook: boolean;
  createdAt: string;
  updatedAt: string;
};

export type PricingComparison = "same" | "upstream_lower" | "upstream_higher" | "mixed" | "unknown";

/** What the upstream publishes for each offered model next to our list price (which meters burn). */
export type UpstreamPricingView = {
  model: string;
  upstreamModel: string;
  listPrice: { inputDiemPerMTok: string; outputDiemPerMTok: string };
  upstreamPrice: { inputDiemPerMTok: string; outputDiemPerMTok: string } | null;
  comparison: PricingComparison;
};

export type CheckedOfferView = OfferView & { upstreamPricing?: UpstreamPricingView[] };

// ─── operations ──────────────────────────────────────────────────────────────

/** Posts an offer after checking its URL (SSRF) and its upstream (reachable, key accepted, models served). */
export async function createOffer(
  supplierId: string,
  input: CreateOfferInput,
  options: UpstreamCheckOptions = {},
): Promise<CheckedOfferView> {
  const baseUrl = assertUpstreamUrlAllowed(input.upstreamBaseUrl, options.policy ?? defaultUpstreamPolicy());
  const models = await resolveModels(input.models);
  const open = await db.offer.count({ where: { supplierId, status: { not: "withdrawn" } } });
  if (open >= MAX_OPEN_OFFERS_PER_ACCOUNT) {
    throw new AppError("unprocessable", `An account can have at most ${MAX_OPEN_OFFERS_PER_ACCOUNT} offers that are not withdrawn.`);
  }
  const upstreamPricing = await checkUpstream({ baseUrl, apiKey: input.upstreamApiKey }, models, options);
  const offer = await db.offer.create({
    data: {
      supplierId,
      upstreamBaseUrl: baseUrl,
      upstreamKeyCiphertext: encryptCredential(input.upstreamApiKey),
      priceCents: input.priceCents,
      dailyCapacityMicroDiem: input.dailyCapacity,
      models: { create: models.map((m) => ({ modelId: m.id, upstreamModel: m.upstreamModel })) },
    },
    select: { id: true },
  });
  log.info("offer posted", { offerId: offer.id, supplierId, priceCents: input.priceCents, models: models.map((m) => m.id) });
  return { ...(await getOfferOrThrow(supplierId, offer.id)), upstreamPricing };
}

/** The caller's offers, newest first, with today's capacity use, earnings and health. */
export async function listOffers(
  supplierId: string,
  filter: { status?: "active" | "paused" | "withdrawn" } = {},
  now: Date = new Date(),
): Promise<{ data: OfferView[] }> {
  return { data: await loadOfferViews({ supplierId, ...(filter.status ? { status: filter.status } : {}) }, now) };
}

/** One of the caller's offers; another account's id, an unknown id and a malformed id are all 404. */
export async function getOfferOrThrow(supplierId: string, offerId: string, now: Date = new Date()): Promise<OfferView> {
  if (!UUID.test(offerId)) throw offerNotFound();
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

  const credentialsChanged = patch.upstreamBaseUrl !== undefined || patch.upstreamApiKey !== undefined;
  const models = patch.models ? await resolveModels(patch.models) : null;
  let upstreamPricing: UpstreamPricingView[] | undefined;
  let baseUrl = offer.upstreamBaseUrl;
  if (credentialsChanged || models) {
    if (patch.upstreamBaseUrl !== undefined) {
      baseUrl = assertUpstreamUrlAllowed(patch.upstreamBaseUrl, options.policy ?? defaultUpstreamPolicy());
      assertKeyResentForNewUrl(baseUrl, offer.upstreamBaseUrl, patch.upstreamApiKey);
    }
    const apiKey = patch.upstreamApiKey ?? decryptCredential(offer.upstreamKeyCiphertext);
    const offered = models ?? (await modelsWithListPrices(offer.models));
    upstreamPricing = await checkUpstream({ baseUrl, apiKey }, offered, options);
  }

  await db.$transaction(async (tx) => {
    const updated = await tx.offer.updateMany({
      where: { id: offer.id, supplierId, status: { not: "withdrawn" } },
      data: {
        ...(patch.priceCents !== undefined && { priceCents: patch.priceCents }),
        ...(patch.dailyCapacity !== undefined && { dailyCapacityMicroDiem: patch.dailyCapacity }),
        ...(patch.status !== undefined && { status: patch.status }),
        ...(credentialsChanged && {
          upstreamBaseUrl: baseUrl,
          ...(patch.upstreamApiKey !== undefined && { upstreamKeyCiphertext: encryptCredential(patch.upstreamApiKey) }),
          consecutiveFailures: 0,
          unhealthyUntil: null,
        }),
        updatedAt: new Date(),
      },
    });
    if (updated.count === 0) throw withdrawnConflict();
    if (models) await replaceModels(tx, offer.id, models);
  });
  log.info("offer updated", { offerId: offer.id, supplierId, fields: Object.keys(patch).filter((k) => k !== "upstreamApiKey") });
  return { ...(await getOfferOrThrow(supplierId, offer.id)), ...(upstreamPricing && { upstreamPricing }) };
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

/** For the router only: where to forward and with which key (decrypted in memory, never logged). */
export async function getOfferCredentials(offerId: string, tx: Tx = db): Promise<OfferCredentials> {
  const offer = await tx.offer.findUnique({ where: { id: offerId }, select: { upstreamBaseUrl: true, upstreamKeyCiphertext: true } });
  if (!offer) throw offerNotFound();
  return { baseUrl: offer.upstreamBaseUrl, apiKey: decryptCredential(offer.upstreamKeyCiphertext) };
}

// ─── internals ───────────────────────────────────────────────────────────────

type OfferedModel = {
  id: string;
  upstreamModel: string;
  inputMicroDiemPerMTok: bigint;
  outputMicroDiemPerMTok: bigint;
};

/** Catalog models named by the supplier, each with the upstream's own name (default: the same id). */
async function resolveModels(refs: z.infer<typeof Models>): Promise<OfferedModel[]> {
  const wanted = refs.map((ref) => (typeof ref === "string" ? { id: ref, upstreamModel: ref } : { id: ref.id, upstreamModel: ref.upstreamModel ?? ref.id }));
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
    return { ...m, inputMicroDiemPerMTok: model.inputMicroDiemPerMTok, outputMicroDiemPerMTok: model.outputMicroDiemPerMTok };
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
  }));
}

/** GET {base}/models with the key: refuses an unreachable upstream, a refused key, or a missing model. */
async function checkUpstream(
  credentials: OfferCredentials,
  models: OfferedModel[],
  options: UpstreamCheckOptions,
): Promise<UpstreamPricingView[]> {
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
      throw new AppError("upstream_url_forbidden", error.message, { details: { param: "upstreamBaseUrl" } });
    }
    throw new AppError("upstream_unreachable", `GET ${credentials.baseUrl}/models failed: ${error.message}`, {
      details: { param: "upstreamBaseUrl" },
    });
  }
  if (!result.ok) {
    if (result.reason === "auth_failed") {
      throw new AppError(
        "upstream_auth_failed",
        `The upstream refused the API key (HTTP ${result.status} from GET ${credentials.baseUrl}/models).`,
        { details: { param: "upstreamApiKey", upstreamStatus: result.status } },
      );
    }
    const what = result.reason === "bad_status" ? `answered HTTP ${result.status}` : "did not answer with a model list";
    throw new AppError("upstream_unreachable", `GET ${credentials.baseUrl}/models ${what}; is this an OpenAI-compatible base URL?`, {
      details: { param: "upstreamBaseUrl", upstreamStatus: result.status },
    });
  }
  const served = new Map(result.models.map((m) => [m.id, m]));
  const missing = models.filter((m) => !served.has(m.upstreamModel));
  if (missing.length > 0) {
    const names = missing.map((m) => m.upstreamModel);
    throw new AppError(
      "upstream_model_missing",
      `The upstream does not list ${names.map((n) => `"${n}"`).join(", ")} in GET /models; name the upstream's own model id with {"id", "upstreamModel"}.`,
      { details: { param: "models", missingModels: names } },
    );
  }
  return models.map((m) => {
    const upstream = served.get(m.upstreamModel)!.pricing;
    const list = { inputMicroDiemPerMTok: m.inputMicroDiemPerMTok, outputMicroDiemPerMTok: m.outputMicroDiemPerMTok };
    return {
      model: m.id,
      upstreamModel: m.upstreamModel,
      listPrice: formatPricing(list),
      upstreamPrice: upstream ? formatPricing(upstream) : null,
      comparison: comparePricing(upstream, list),
    };
  });
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

async function replaceModels(tx: Tx, offerId: string, models: OfferedModel[]) {
  await tx.offerModel.deleteMany({ where: { offerId } });
  await tx.offerModel.createMany({ data: models.map((m) => ({ offerId, modelId: m.id, upstreamModel: m.upstreamModel })) });
}

async function findOwnedOffer(supplierId: string, offerId: string) {
  if (!UUID.test(offerId)) throw offerNotFound();
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
      models: { select: { modelId: true, upstreamModel: true }, orderBy: { modelId: "asc" } },
      days: { where: { day: utcDay(now) } },
    },
  });
  if (offers.length === 0) return [];
  // Needs an index on clears(offer_id) to stay cheap as clears grow (asked of the lead).
  const earnings = await db.clear.groupBy({
    by: ["offerId"],
    where: { offerId: { in: offers.map((o) => o.id) } },
    _sum: { supplierMicros: true },
    _count: { _all: true },
  });
  const earned = new Map(earnings.map((e) => [e.offerId, e]));
  const resetsAt = nextUtcMidnight(now).toISOString();
  return offers.map((o) => {
    const use = {
      dailyCapacityMicroDiem: o.dailyCapacityMicroDiem,
      burnedMicroDiem: o.days[0]?.burnedMicroDiem ?? 0n,
      heldMicroDiem: o.days[0]?.heldMicroDiem ?? 0n,
    };
    const remaining = remainingMicroDiem(use);
    return {
      id: o.id,
      status: o.status,
      priceCents: o.priceCents,
      dailyCapacity: formatMicros(o.dailyCapacityMicroDiem),
      upstreamBaseUrl: o.upstreamBaseUrl,
      models: o.models.map((m) => ({ id: m.modelId, upstreamModel: m.upstreamModel })),
      today: {
        day: utcDayKey(now),
        burnedDiem: formatMicros(use.burnedMicroDiem),
        heldDiem: formatMicros(use.heldMicroDiem),
        remainingDiem: formatMicros(remaining),
        resetsAt,
      },
      earningsUsdc: formatMicros(earned.get(o.id)?._sum.supplierMicros ?? 0n),
      clears: earned.get(o.id)?._count._all ?? 0,
      health: healthView(o, now),
      onBook: o.status === "active" && isHealthy(o, now) && remaining > 0n,
      createdAt: o.createdAt.toISOString(),
      updatedAt: o.updatedAt.toISOString(),
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
      "Invalid request body: upstreamApiKey: required when upstreamBaseUrl changes (the stored key is only ever sent to the URL it was given for).",
      { details: { param: "upstreamApiKey" } },
    );
  }
}

function offerNotFound() {
  return new AppError("not_found", "No such offer among yours.");
}

function withdrawnConflict() {
  return new AppError("conflict", "This offer was withdrawn; withdrawn offers cannot change. Post a new offer instead.");
}
