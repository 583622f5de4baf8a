import "server-only";
import type { z } from "zod";
import { db, type Tx } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { featuresOf, type Features } from "@/lib/supply/features";
import type { OfferModels } from "@/lib/supply/schemas";

/**
 * The models an offer names, resolved against the catalog: each with the upstream's own name, our list prices and
 * what the catalog model can do. The offer_models rows store what the upstream check found served
 * (lib/supply/upstream-check.ts): the catalog's features, less those the upstream says the model lacks.
 */

export type OfferedModel = {
  id: string;
  upstreamModel: string;
  inputMicroDiemPerMTok: bigint;
  outputMicroDiemPerMTok: bigint;
  /** What the catalog model can do. */
  features: Features;
};

/** Catalog models named by the supplier, each with the upstream's own name (default: the same id). */
export async function resolveModels(refs: z.infer<typeof OfferModels>): Promise<OfferedModel[]> {
  const wanted = refs.map((ref) =>
    typeof ref === "string" ? { id: ref, upstreamModel: ref } : { id: ref.id, upstreamModel: ref.upstream_model ?? ref.id },
  );
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

/** An offer's stored models with their list prices and features, for re-checking the upstream. */
export async function modelsWithListPrices(models: { modelId: string; upstreamModel: string }[]): Promise<OfferedModel[]> {
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

/** One model's offer_models row, with the features the upstream check found served. */
export function offerModelRow(m: OfferedModel, served: Map<string, Features>) {
  const f = served.get(m.id) ?? m.features;
  return {
    modelId: m.id,
    upstreamModel: m.upstreamModel,
    supportsTools: f.tools,
    supportsJsonSchema: f.json_schema,
    supportsVision: f.vision,
  };
}

/**
 * New credentials may serve other features than the old ones did. A model a concurrent change has just removed
 * from the offer is no longer there to refresh (updateMany, not update: that is not an error).
 */
export async function refreshFeatures(tx: Tx, offerId: string, models: OfferedModel[], served: Map<string, Features>) {
  for (const m of models) {
    const { supportsTools, supportsJsonSchema, supportsVision } = offerModelRow(m, served);
    await tx.offerModel.updateMany({ where: { offerId, modelId: m.id }, data: { supportsTools, supportsJsonSchema, supportsVision } });
  }
}

/** A new model list replaces the old one whole, in the caller's transaction. */
export async function replaceModels(tx: Tx, offerId: string, models: OfferedModel[], served: Map<string, Features>) {
  await tx.offerModel.deleteMany({ where: { offerId } });
  await tx.offerModel.createMany({ data: models.map((m) => ({ offerId, ...offerModelRow(m, served) })) });
}
