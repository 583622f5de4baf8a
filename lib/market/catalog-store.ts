import "server-only";
import type { Model, PrismaClient } from "@prisma/client";
import { CATALOG, type CatalogModel } from "@/lib/market/catalog";
import { formatMicros, parseMicros } from "@/lib/money";

/**
 * The catalog in the database, as the operator manages it (`npm run catalog`, scripts/catalog.ts). The models row
 * holds the current list price; a trigger appends every price it ever had to model_prices (effective_from), so
 * the history stays auditable whoever changes it. Holds snapshot the price they were reserved at (the hot path's
 * SQL), so a price change never re-prices a completion in flight. Retiring a model keeps its row (clears, holds and
 * history reference it): it stops being listed, offered and routed to, and buyers naming it get 410 model_retired.
 */

type Client = Pick<PrismaClient, "model" | "modelPrice" | "$transaction">;

export type CatalogField =
  | "name"
  | "input"
  | "output"
  | "cache_read"
  | "cache_write"
  | "context_length"
  | "max_output_tokens"
  | "features"
  | "bills_reasoning"
  | "active";
export type CatalogChange = { id: string; fields: Partial<Record<CatalogField, [from: string, to: string]>> };
export type CatalogPlan = { add: CatalogModel[]; change: CatalogChange[]; unchanged: string[]; notInSource: string[] };

export function describeFeatures(m: Pick<CatalogModel, "supportsTools" | "supportsJsonSchema" | "supportsVision">): string {
  const list = [m.supportsTools && "tools", m.supportsJsonSchema && "json_schema", m.supportsVision && "vision"].filter(Boolean);
  return list.length ? list.join(",") : "-";
}

export async function listCatalog(db: Client, options: { includeRetired?: boolean } = {}): Promise<Model[]> {
  return db.model.findMany({ where: options.includeRetired ? {} : { active: true }, orderBy: { id: "asc" } });
}

export async function getPriceHistory(db: Client, modelId: string) {
  return db.modelPrice.findMany({ where: { modelId }, orderBy: [{ effectiveFrom: "asc" }, { id: "asc" }] });
}

/** The list price in force for a model at a moment (what a hold reserved at that moment was priced at). */
export async function getPriceAt(db: Client, modelId: string, at: Date) {
  return db.modelPrice.findFirst({ where: { modelId, effectiveFrom: { lte: at } }, orderBy: [{ effectiveFrom: "desc" }, { id: "desc" }] });
}

/**
 * What applying `source` would change. Fields the source does not carry (`partial`: a sync from an upstream that
 * publishes only prices and limits) are left alone. Models in the database but not in the source are reported,
 * never retired implicitly; a retired model named by the source is reactivated.
 */
export async function planCatalog(
  db: Client,
  source: readonly CatalogModel[],
  partial: Partial<Record<CatalogField, boolean>> = {},
): Promise<CatalogPlan> {
  const current = new Map((await listCatalog(db, { includeRetired: true })).map((m) => [m.id, m]));
  const plan: CatalogPlan = { add: [], change: [], unchanged: [], notInSource: [] };
  for (const wanted of source) {
    const have = current.get(wanted.id);
    if (!have) {
      plan.add.push(wanted);
      continue;
    }
    const fields: CatalogChange["fields"] = {};
    const compare = (field: CatalogField, from: string, to: string) => {
      if (!partial[field] && from !== to) fields[field] = [from, to];
    };
    compare("name", have.name, wanted.name);
    compare("input", formatMicros(have.inputMicroDiemPerMTok), formatMicros(wanted.inputMicroDiemPerMTok));
    compare("output", formatMicros(have.outputMicroDiemPerMTok), formatMicros(wanted.outputMicroDiemPerMTok));
    compare("cache_read", optionalPrice(have.cacheReadMicroDiemPerMTok), optionalPrice(wanted.cacheReadMicroDiemPerMTok));
    compare("cache_write", optionalPrice(have.cacheWriteMicroDiemPerMTok), optionalPrice(wanted.cacheWriteMicroDiemPerMTok));
    compare("context_length", String(have.contextTokens), String(wanted.contextTokens));
    compare("max_output_tokens", String(have.maxOutputTokens), String(wanted.maxOutputTokens));
    compare("features", describeFeatures(have), describeFeatures(wanted));
    compare("bills_reasoning", String(have.billsReasoning), String(wanted.billsReasoning));
    compare("active", String(have.active), "true");
    if (Object.keys(fields).length) plan.change.push({ id: wanted.id, fields });
    else plan.unchanged.push(wanted.id);
  }
  const named = new Set(source.map((m) => m.id));
  plan.notInSource = [...current.values()].filter((m) => m.active && !named.has(m.id)).map((m) => m.id);
  return plan;
}

/** Applies a plan in one transaction (the price trigger records every new price). */
export async function applyCatalogPlan(db: Client, plan: CatalogPlan, source: readonly CatalogModel[]): Promise<void> {
  const byId = new Map(source.map((m) => [m.id, m]));
  await db.$transaction(async (tx) => {
    for (const model of plan.add) await tx.model.create({ data: model });
    for (const change of plan.change) {
      const wanted = byId.get(change.id)!;
      const f = change.fields;
      await tx.model.update({
        where: { id: change.id },
        data: {
          ...(f.name && { name: wanted.name }),
          ...(f.input && { inputMicroDiemPerMTok: wanted.inputMicroDiemPerMTok }),
          ...(f.output && { outputMicroDiemPerMTok: wanted.outputMicroDiemPerMTok }),
          ...(f.cache_read && { cacheReadMicroDiemPerMTok: wanted.cacheReadMicroDiemPerMTok }),
          ...(f.cache_write && { cacheWriteMicroDiemPerMTok: wanted.cacheWriteMicroDiemPerMTok }),
          ...(f.context_length && { contextTokens: wanted.contextTokens }),
          ...(f.max_output_tokens && { maxOutputTokens: wanted.maxOutputTokens }),
          ...(f.features && {
            supportsTools: wanted.supportsTools,
            supportsJsonSchema: wanted.supportsJsonSchema,
            supportsVision: wanted.supportsVision,
          }),
          ...(f.bills_reasoning && { billsReasoning: wanted.billsReasoning }),
          ...(f.active && { active: true, retiredAt: null }),
        },
      });
    }
  });
}

/** Makes the database hold every model of `source` as written there (dev, tests, `catalog import`). */
export async function importCatalog(db: Client, source: readonly CatalogModel[]): Promise<CatalogPlan> {
  const plan = await planCatalog(db, source);
  await applyCatalogPlan(db, plan, source);
  return plan;
}

/** A fresh install's catalog: the default file, applied only when the database has no models at all. */
export async function seedCatalogWhenEmpty(db: Client, source: readonly CatalogModel[] = CATALOG): Promise<number> {
  if ((await db.model.count()) > 0) return 0;
  await importCatalog(db, source);
  return source.length;
}

export async function addModel(db: Client, model: CatalogModel): Promise<Model> {
  const existing = await db.model.findUnique({ where: { id: model.id } });
  if (existing)
    throw new Error(`model ${model.id} already exists${existing.active ? "" : " (retired; `set` it or import it to bring it back)"}`);
  return db.model.create({ data: model });
}

export type ModelUpdate = {
  name?: string;
  input?: string;
  output?: string;
  /** A price, or "none" to remove it. */
  cacheRead?: string;
  cacheWrite?: string;
  contextLength?: number;
  maxOutputTokens?: number;
  features?: string[];
  billsReasoning?: boolean;
};

/** Changes a model; a new input, output or cache price becomes a new row of its price history, effective now. */
export async function setModel(db: Client, id: string, update: ModelUpdate): Promise<Model> {
  const price = (text: string | undefined, what: string) => {
    if (text === undefined) return undefined;
    const micros = parseMicros(text);
    if (micros === null) throw new Error(`${what}: "${text}" is not a decimal price like 0.70 (diem per 1M tokens)`);
    return micros;
  };
  const features = update.features && new Set(update.features);
  for (const f of features ?? [])
    if (!["tools", "json_schema", "vision"].includes(f)) throw new Error(`unknown feature ${f} (tools, json_schema, vision)`);
  const existing = await db.model.findUnique({ where: { id } });
  if (!existing) throw new Error(`no model ${id}`);
  return db.model.update({
    where: { id },
    data: {
      name: update.name,
      inputMicroDiemPerMTok: price(update.input, "--input"),
      outputMicroDiemPerMTok: price(update.output, "--output"),
      cacheReadMicroDiemPerMTok: update.cacheRead === "none" ? null : price(update.cacheRead, "--cache-read"),
      cacheWriteMicroDiemPerMTok: update.cacheWrite === "none" ? null : price(update.cacheWrite, "--cache-write"),
      contextTokens: update.contextLength,
      maxOutputTokens: update.maxOutputTokens,
      ...(features && {
        supportsTools: features.has("tools"),
        supportsJsonSchema: features.has("json_schema"),
        supportsVision: features.has("vision"),
      }),
      billsReasoning: update.billsReasoning,
    },
  });
}

/** Stops listing, offering and routing a model; its history, clears and offers' rows stay. */
export async function retireModel(db: Client, id: string, now = new Date()): Promise<Model> {
  const existing = await db.model.findUnique({ where: { id } });
  if (!existing) throw new Error(`no model ${id}`);
  if (!existing.active) return existing;
  return db.model.update({ where: { id }, data: { active: false, retiredAt: now } });
}

/**
 * An OpenAI-compatible `/models` answer read as catalog entries: Venice's `model_spec` (name, context, output cap,
 * pricing in diem or usd per 1M tokens, capabilities; cache prices as `cache_input` or `cache_read`, and
 * `cache_write`), or OpenRouter's `pricing` (`prompt`, `completion`, `input_cache_read`, `input_cache_write`: USD per
 * token). Entries without pricing are skipped (and counted).
 */
export function catalogFromUpstreamModels(body: unknown): { models: CatalogModel[]; skipped: string[] } {
  const data = Array.isArray(body) ? body : (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new Error("the upstream's /models answer has no data array");
  const models: CatalogModel[] = [];
  const skipped: string[] = [];
  for (const entry of data as Record<string, unknown>[]) {
    if (typeof entry?.id !== "string") continue;
    const spec = (entry.model_spec ?? {}) as Record<string, unknown>;
    const pricing = (spec.pricing ?? entry.pricing) as Record<string, Record<string, unknown> | string | undefined> | undefined;
    const perMillion = (key: string) => {
      const p = pricing?.[key];
      return typeof p === "object" && p !== null ? priceMicros(p.diem ?? p.usd) : null;
    };
    const input = perMillion("input") ?? perTokenMicros(pricing?.prompt);
    const output = perMillion("output") ?? perTokenMicros(pricing?.completion);
    const cacheRead = perMillion("cache_input") ?? perMillion("cache_read") ?? perTokenMicros(pricing?.input_cache_read);
    const cacheWrite = perMillion("cache_write") ?? perTokenMicros(pricing?.input_cache_write);
    const context = spec.availableContextTokens ?? entry.context_length;
    if (input === null || output === null || typeof context !== "number") {
      skipped.push(entry.id);
      continue;
    }
    const caps = (spec.capabilities ?? {}) as Record<string, unknown>;
    const maxOutput = typeof spec.maxCompletionTokens === "number" ? spec.maxCompletionTokens : Math.min(context, 8192);
    models.push({
      id: entry.id,
      name: typeof spec.name === "string" ? spec.name : entry.id,
      inputMicroDiemPerMTok: input,
      outputMicroDiemPerMTok: output,
      cacheReadMicroDiemPerMTok: cacheRead,
      cacheWriteMicroDiemPerMTok: cacheWrite,
      contextTokens: context,
      maxOutputTokens: maxOutput,
      supportsTools: caps.supportsFunctionCalling === true,
      supportsJsonSchema: caps.supportsResponseSchema === true,
      supportsVision: caps.supportsVision === true,
      // Venice's reasoning models bill their reasoning tokens as output.
      billsReasoning: caps.supportsReasoning === true,
    });
  }
  return { models, skipped };
}

function priceMicros(value: unknown): bigint | null {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 && value < 1e9 ? parseMicros(value.toFixed(6)) : null;
  if (typeof value === "string") return parseMicros(value.trim());
  return null;
}

/** OpenRouter's price of one token in USD ("0.0000007") as micro-diem per 1M tokens (700000); null when absent or invalid. */
function perTokenMicros(value: unknown): bigint | null {
  const match = typeof value === "string" ? /^(\d{1,9})(?:\.(\d{1,12}))?$/.exec(value.trim()) : null;
  if (!match) return null;
  return BigInt(match[1]) * 10n ** 12n + BigInt((match[2] ?? "").padEnd(12, "0"));
}

function optionalPrice(micros: bigint | null): string {
  return micros === null ? "none" : formatMicros(micros);
}

/** Prints a plan as the operator reads it before confirming. */
export function describePlan(plan: CatalogPlan): string[] {
  const lines: string[] = [];
  for (const m of plan.add) {
    lines.push(
      `+ ${m.id}  "${m.name}"  input ${formatMicros(m.inputMicroDiemPerMTok)}  output ${formatMicros(m.outputMicroDiemPerMTok)}${m.cacheReadMicroDiemPerMTok === null ? "" : `  cache_read ${formatMicros(m.cacheReadMicroDiemPerMTok)}`}${m.cacheWriteMicroDiemPerMTok === null ? "" : `  cache_write ${formatMicros(m.cacheWriteMicroDiemPerMTok)}`}  context ${m.contextTokens}  max_output ${m.maxOutputTokens}  features ${describeFeatures(m)}${m.billsReasoning ? "  bills_reasoning" : ""}`,
    );
  }
  for (const c of plan.change) {
    const parts = Object.entries(c.fields).map(([field, [from, to]]) => `${field} ${from} -> ${to}`);
    lines.push(`~ ${c.id}  ${parts.join("  ")}`);
  }
  for (const id of plan.notInSource) lines.push(`  ${id}  (not in the source; left as it is: \`catalog retire ${id}\` to retire it)`);
  if (!plan.add.length && !plan.change.length) lines.push("no changes");
  return lines;
}
