/**
 * The marketplace's model catalog as files describe it: what buyers can name in `model`, and the list price that
 * meters capacity burn (micro-diem per 1M tokens; 1 diem = $1 of list-price inference). The catalog itself lives
 * in the database (models, with its price history in model_prices) and is managed with `npm run catalog`
 * (lib/market/catalog-store.ts); `catalog/default.json` is what a fresh install starts with.
 */
import "server-only";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { parseMicros } from "@/lib/money";
import { MODEL_ID_PATTERN } from "@/lib/wire";

export type CatalogModel = {
  id: string;
  name: string;
  inputMicroDiemPerMTok: bigint;
  outputMicroDiemPerMTok: bigint;
  /** Prompt caching (issue 40): a cached prompt token's price, to read it and to write it; null: none. */
  cacheReadMicroDiemPerMTok: bigint | null;
  cacheWriteMicroDiemPerMTok: bigint | null;
  contextTokens: number;
  maxOutputTokens: number;
  /** What the model can do (see lib/supply/features.ts); offers serve at most this. */
  supportsTools: boolean;
  supportsJsonSchema: boolean;
  supportsVision: boolean;
  /** Its upstreams bill hidden reasoning, which a buyer who asks for reasoning pays (lib/upstream/metering.ts). */
  billsReasoning: boolean;
};

const ListPriceText = z
  .string()
  .refine((text) => parseMicros(text) !== null, 'must be a decimal string with at most 6 places, e.g. "0.70"');

/** One model in a catalog file (snake_case, prices as decimal strings, like the wire). */
export const CatalogFileModel = z.strictObject({
  id: z.string().regex(MODEL_ID_PATTERN, "letters, digits and . _ : / - (at most 128)"),
  name: z.string().min(1).max(200),
  input_diem_per_mtok: ListPriceText,
  output_diem_per_mtok: ListPriceText,
  /** A cached prompt token's price (reading it; writing it where providers charge that); absent: none. */
  cache_read_diem_per_mtok: ListPriceText.optional(),
  cache_write_diem_per_mtok: ListPriceText.optional(),
  context_length: z.number().int().min(1).max(100_000_000),
  max_output_tokens: z.number().int().min(1).max(100_000_000),
  features: z.array(z.enum(["tools", "json_schema", "vision"])).default([]),
  /** Its upstreams bill hidden reasoning tokens (a buyer who asks for reasoning pays them, up to max_tokens). */
  bills_reasoning: z.boolean().default(false),
});

export const CatalogFile = z.strictObject({
  description: z.string().optional(),
  models: z.array(CatalogFileModel).refine((models) => new Set(models.map((m) => m.id)).size === models.length, "model ids must be unique"),
});

export function fromFileModel(m: z.infer<typeof CatalogFileModel>): CatalogModel {
  return {
    id: m.id,
    name: m.name,
    inputMicroDiemPerMTok: parseMicros(m.input_diem_per_mtok)!,
    outputMicroDiemPerMTok: parseMicros(m.output_diem_per_mtok)!,
    cacheReadMicroDiemPerMTok: m.cache_read_diem_per_mtok === undefined ? null : parseMicros(m.cache_read_diem_per_mtok)!,
    cacheWriteMicroDiemPerMTok: m.cache_write_diem_per_mtok === undefined ? null : parseMicros(m.cache_write_diem_per_mtok)!,
    contextTokens: m.context_length,
    maxOutputTokens: m.max_output_tokens,
    supportsTools: m.features.includes("tools"),
    supportsJsonSchema: m.features.includes("json_schema"),
    supportsVision: m.features.includes("vision"),
    billsReasoning: m.bills_reasoning,
  };
}

/** Reads and validates a catalog file; throws one error naming every problem. */
export function parseCatalogFile(text: string, source = "catalog file"): CatalogModel[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new Error(`${source}: not JSON (${(error as Error).message})`, { cause: error });
  }
  const parsed = CatalogFile.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(file)"}: ${i.message}`);
    throw new Error(`${source} is not a valid catalog:\n${lines.join("\n")}`);
  }
  return parsed.data.models.map(fromFileModel);
}

export function readCatalogFile(path: string | URL): CatalogModel[] {
  return parseCatalogFile(readFileSync(path, "utf8"), String(path));
}

export const DEFAULT_CATALOG_FILE = new URL("../../catalog/default.json", import.meta.url);

/** The default catalog (catalog/default.json): what a fresh install, `npm run dev` and the tests start with. */
export const CATALOG: readonly CatalogModel[] = readCatalogFile(DEFAULT_CATALOG_FILE);
