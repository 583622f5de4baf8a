import "server-only";
import { db, Prisma } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { cached } from "@/lib/market/cache";
import type { CatalogModel } from "@/lib/market/catalog";
import { formatMicros } from "@/lib/money";
import { NO_FEATURES, type Features } from "@/lib/supply/features";
import { utcDayKey } from "@/lib/supply/capacity";
import { disputeRate, disputeWindowStart } from "@/lib/supply/offer-health";
import { suggestModelId } from "@/lib/market/model-suggestion";
import type { BookView } from "@/lib/market/schemas";
import { formatListPrice } from "@/lib/wire";

/**
 * The order book: what buyers can be routed to right now. An offer is on the book when it is active,
 * not cooling down after upstream failures, and has capacity left today (UTC): svc_offer_on_book, in SQL. Every market view
 * (book, market models, pool summary, GET /v1/models) derives its prices and depth from the same
 * aggregate, so they agree. Offers serve several models from one capacity, so per-model depth
 * overlaps between models.
 */

export const BOOK_TTL_MS = 2_000;
export const DEPTH_TTL_MS = 3_000;
const MODELS_TTL_MS = 5_000;

/**
 * SQL condition for "on the book" (prisma/functions/svc_offer_on_book.sql) over `offers o` LEFT JOINed with today's
 * `offer_days d` (`d.offer_id = o.id AND d.day = <today>::date`). Shared with anyone who must agree with the book.
 */
export function onBookCondition(now: Date): Prisma.Sql {
  return Prisma.sql`svc_offer_on_book(o.status, o.unhealthy_until, o.probe_delisted, o.daily_capacity_micro_diem, d.burned_micro_diem,
    d.held_micro_diem, ${now}::timestamptz)`;
}

/** What is left of the offer's capacity today, over the same join (prisma/functions/svc_offer_remaining_micro_diem.sql). */
export const REMAINING = Prisma.sql`svc_offer_remaining_micro_diem(o.daily_capacity_micro_diem, d.burned_micro_diem, d.held_micro_diem)`;

export type CatalogEntry = CatalogModel & { createdAt: Date };

/** Active catalog models by id (cached briefly: the catalog changes rarely). */
export function getActiveModels(): Promise<Map<string, CatalogEntry>> {
  return cached("models", MODELS_TTL_MS, async () => {
    const models = await db.model.findMany({ where: { active: true }, orderBy: { id: "asc" }, omit: { active: true } });
    return new Map(models.map((m) => [m.id, m]));
  });
}

/** An active model by id; a model added since the cached catalog was read is found by its primary key. */
export async function getActiveModelOrThrow(modelId: string): Promise<CatalogEntry> {
  const model =
    (await getActiveModels()).get(modelId) ?? (await db.model.findFirst({ where: { id: modelId, active: true }, omit: { active: true } }));
  if (!model) return refuseInactiveModel(modelId);
  return model;
}

/** Throws the buyer's error for a model that is not (or no longer) served: 410 model_retired or 404 model_not_found. */
export async function refuseInactiveModel(modelId: string): Promise<never> {
  const retired = await db.model.findFirst({ where: { id: modelId, active: false }, select: { retiredAt: true } });
  if (retired) {
    const when = retired.retiredAt ? ` on ${retired.retiredAt.toISOString().slice(0, 10)}` : "";
    throw new AppError(
      "model_retired",
      `Model "${modelId}" was retired${when} and is no longer served; see GET /v1/models for the models on this market.`,
      {
        details: { param: "model" },
      },
    );
  }
  throw await modelNotFound(modelId);
}

/** 404 model_not_found, with the catalog id the buyer most likely meant (`did_you_mean`, null when none is near). */
export async function modelNotFound(modelId: string): Promise<AppError> {
  const suggestion = suggestModelId(modelId, (await getActiveModels()).values());
  const hint = suggestion ? ` Did you mean "${suggestion}"?` : "";
  return new AppError("model_not_found", `Unknown model "${modelId}".${hint} See GET /v1/models for the models on this market.`, {
    details: { param: "model", did_you_mean: suggestion },
  });
}

/** Clears over the dispute window, and those whose claimed usage was disputed (see lib/upstream/metering.ts). */
type DisputeCounts = { clears: number; disputed: number };
export type Level = { priceCents: number; remainingMicroDiem: bigint; offers: number } & DisputeCounts;
export type ModelDepth = {
  levels: Level[];
  remainingMicroDiem: bigint;
  offers: number;
  suppliers: number;
  bestPriceCents: number | null;
  /** The features at least one offer on the book serves. */
  features: Features;
} & DisputeCounts;

type DepthRow = {
  model_id: string;
  price_cents: number | null;
  remaining: string;
  offers: number;
  suppliers: number;
  clears: bigint;
  disputed: bigint;
  tools: boolean;
  json_schema: boolean;
  vision: boolean;
};

export function emptyDepth(): ModelDepth {
  return {
    levels: [],
    remainingMicroDiem: 0n,
    offers: 0,
    suppliers: 0,
    bestPriceCents: null,
    features: NO_FEATURES,
    clears: 0,
    disputed: 0,
  };
}

/** Price levels and totals (grouping sets: one row per level, one total per model) in one query. */
async function queryDepth(now: Date, modelId?: string): Promise<Map<string, ModelDepth>> {
  const rows = await db.$queryRaw<DepthRow[]>`
    SELECT om.model_id, o.price_cents, SUM(${REMAINING})::text AS remaining,
           COUNT(*)::int AS offers, COUNT(DISTINCT o.supplier_id)::int AS suppliers,
           COALESCE(SUM(h.clears), 0)::bigint AS clears, COALESCE(SUM(h.disputed), 0)::bigint AS disputed,
           bool_or(om.supports_tools) AS tools, bool_or(om.supports_json_schema) AS json_schema, bool_or(om.supports_vision) AS vision
    FROM offer_models om
    JOIN offers o ON o.id = om.offer_id
    LEFT JOIN offer_days d ON d.offer_id = o.id AND d.day = ${utcDayKey(now)}::date
    LEFT JOIN LATERAL (
      SELECT SUM(w.clears) AS clears, SUM(w.disputed_clears) AS disputed FROM offer_days w
      WHERE w.offer_id = o.id AND w.day >= ${utcDayKey(disputeWindowStart(now))}::date
    ) h ON true
    WHERE ${onBookCondition(now)} ${modelId === undefined ? Prisma.empty : Prisma.sql`AND om.model_id = ${modelId}`}
    GROUP BY GROUPING SETS ((om.model_id, o.price_cents), (om.model_id))
    ORDER BY om.model_id, o.price_cents NULLS FIRST`;
  const depth = new Map<string, ModelDepth>();
  for (const row of rows) {
    let entry = depth.get(row.model_id);
    if (!entry) depth.set(row.model_id, (entry = emptyDepth()));
    const disputes = { clears: Number(row.clears), disputed: Number(row.disputed) };
    if (row.price_cents === null) {
      entry.remainingMicroDiem = BigInt(row.remaining);
      entry.offers = row.offers;
      entry.suppliers = row.suppliers;
      entry.features = { tools: row.tools, json_schema: row.json_schema, vision: row.vision };
      Object.assign(entry, disputes);
    } else {
      entry.levels.push({ priceCents: row.price_cents, remainingMicroDiem: BigInt(row.remaining), offers: row.offers, ...disputes });
      entry.bestPriceCents ??= row.price_cents;
    }
  }
  return depth;
}

/** Depth of every model on the book (models nobody sells are absent). Cached unless `now` is given. */
export function getDepthByModel(now?: Date): Promise<Map<string, ModelDepth>> {
  return now ? queryDepth(now) : cached("depth", DEPTH_TTL_MS, () => queryDepth(new Date()));
}

/** Capacity-weighted median price: the lowest price at which half of the book's diem is available. */
export function medianPriceCents(levels: Level[]): number | null {
  const total = levels.reduce((sum, l) => sum + l.remainingMicroDiem, 0n);
  if (total === 0n) return null;
  let cumulative = 0n;
  for (const level of levels) {
    cumulative += level.remainingMicroDiem;
    if (cumulative * 2n >= total) return level.priceCents;
  }
  return levels.at(-1)!.priceCents;
}

/** GET /v1/market/book: price levels of one model, cheapest first. Cached unless `now` is given. */
export async function getBook(modelId: string, now?: Date): Promise<BookView> {
  const model = await getActiveModelOrThrow(modelId);
  return now ? computeBook(model, now) : cached(`book:${modelId}`, BOOK_TTL_MS, () => computeBook(model, new Date()));
}

async function computeBook(model: CatalogEntry, now: Date): Promise<BookView> {
  const depth = (await queryDepth(now, model.id)).get(model.id) ?? emptyDepth();
  return {
    model: model.id,
    day: utcDayKey(now),
    as_of: now.toISOString(),
    list_price: formatListPrice(model),
    best_price_cents: depth.bestPriceCents,
    remaining_diem: formatMicros(depth.remainingMicroDiem),
    offers: depth.offers,
    suppliers: depth.suppliers,
    dispute_rate: disputeRate(depth.clears, depth.disputed),
    levels: depth.levels.map((l) => ({
      price_cents: l.priceCents,
      remaining_diem: formatMicros(l.remainingMicroDiem),
      offers: l.offers,
      dispute_rate: disputeRate(l.clears, l.disputed),
    })),
  };
}
