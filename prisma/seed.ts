/**
 * Seed data: the default model catalog (catalog/default.json) and a demo supplier's offers (local dev only).
 * Production seeds the catalog only when it is empty (`npm run db:deploy`, `npm run serve`); afterwards the
 * operator manages it with `npm run catalog`.
 */
import type { PrismaClient } from "@prisma/client";
import { CATALOG } from "../lib/market/catalog";
import { importCatalog } from "../lib/market/catalog-store";
import { encryptCredential } from "../lib/upstream/key-encryption";

/** Dev and tests: the catalog becomes the default file's content (added, changed back, or reactivated). */
export async function seedCatalog(db: PrismaClient): Promise<void> {
  await importCatalog(db, CATALOG);
}

/** The demo upstream (the reference upstream) serves everything its catalog model can do. */
function catalogFeatureColumns(modelId: string) {
  const { supportsTools, supportsJsonSchema, supportsVision } = CATALOG.find((m) => m.id === modelId)!;
  return { supportsTools, supportsJsonSchema, supportsVision };
}

/** What a demo offer declares, as suppliers differ: unset fields keep the defaults (unknown, retains and trains). */
type DemoDeclared = {
  quantization?: "fp16" | "bf16" | "fp8" | "int8" | "int4" | "unknown";
  retainsPrompts?: boolean;
  trainsOnPrompts?: boolean;
  contextTokens?: number;
  maxOutputTokens?: number;
};

export type DemoOffer = { priceCents: number; dailyCapacityDiem: number; models: string[]; declared: DemoDeclared };

export const DEMO_OFFERS: readonly DemoOffer[] = [
  // Cheap, quantized, keeps nothing, serves a shorter context than the models allow.
  {
    priceCents: 80,
    dailyCapacityDiem: 25,
    models: ["llama-3.3-70b", "mistral-31-24b"],
    declared: { quantization: "fp8", retainsPrompts: false, trainsOnPrompts: false, contextTokens: 32_768 },
  },
  // Says nothing: shown as unknown, retaining and training on prompts.
  { priceCents: 90, dailyCapacityDiem: 100, models: ["llama-3.3-70b", "qwen3-235b", "venice-uncensored"], declared: {} },
  // Full precision, logs prompts for abuse review but never trains on them.
  {
    priceCents: 120,
    dailyCapacityDiem: 250,
    models: ["llama-3.3-70b", "qwen3-235b", "mistral-31-24b", "venice-uncensored"],
    declared: { quantization: "bf16", retainsPrompts: true, trainsOnPrompts: false },
  },
];

/** Gives the demo supplier wallet its offers on the reference upstream, once (idempotent by wallet). */
export async function seedDemoSupplier(
  db: PrismaClient,
  supplier: { walletAddress: string; upstreamBaseUrl: string; upstreamApiKey: string },
): Promise<number> {
  const account = await db.account.upsert({
    where: { walletAddress: supplier.walletAddress },
    create: { walletAddress: supplier.walletAddress },
    update: {},
  });
  const existing = await db.offer.count({ where: { supplierId: account.id, status: { not: "withdrawn" } } });
  if (existing > 0) {
    // The reference upstream may have moved to another port since the last run: point the offers at it.
    await db.offer.updateMany({
      where: { supplierId: account.id },
      data: { upstreamBaseUrl: supplier.upstreamBaseUrl, upstreamKeyCiphertext: encryptCredential(supplier.upstreamApiKey) },
    });
    return existing;
  }
  for (const offer of DEMO_OFFERS) {
    await db.offer.create({
      data: {
        supplierId: account.id,
        upstreamBaseUrl: supplier.upstreamBaseUrl,
        upstreamKeyCiphertext: encryptCredential(supplier.upstreamApiKey),
        priceCents: offer.priceCents,
        dailyCapacityMicroDiem: BigInt(offer.dailyCapacityDiem) * 1_000_000n,
        ...offer.declared,
        models: { create: offer.models.map((modelId) => ({ modelId, upstreamModel: modelId, ...catalogFeatureColumns(modelId) })) },
      },
    });
  }
  return DEMO_OFFERS.length;
}
