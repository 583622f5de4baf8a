import { db } from "@/lib/db";
import { AppError } from "@/lib/http/errors";

export type RoutableModel = {
  id: string;
  inputMicroDiemPerMTok: bigint;
  outputMicroDiemPerMTok: bigint;
  contextTokens: number;
  maxOutputTokens: number;
};

const TTL_MS = 10_000;
let cache: { at: number; models: Map<string, RoutableModel> } | undefined;

/** The catalog entry for a buyable model (cached for a few seconds: it is read on every completion). */
export async function getRoutableModel(id: string): Promise<RoutableModel> {
  if (!cache || Date.now() - cache.at > TTL_MS) {
    const rows = await db.model.findMany({
      where: { active: true },
      select: { id: true, inputMicroDiemPerMTok: true, outputMicroDiemPerMTok: true, contextTokens: true, maxOutputTokens: true },
    });
    cache = { at: Date.now(), models: new Map(rows.map((m) => [m.id, m])) };
  }
  const model = cache.models.get(id) ?? (await refreshFor(id));
  if (!model) throw new AppError("model_not_found", `Unknown model "${id}". GET /v1/models lists the models you can buy.`, { details: { param: "model" } });
  return model;
}

/** A model added since the cache was filled is found without waiting for the TTL. */
async function refreshFor(id: string): Promise<RoutableModel | undefined> {
  const row = await db.model.findFirst({
    where: { id, active: true },
    select: { id: true, inputMicroDiemPerMTok: true, outputMicroDiemPerMTok: true, contextTokens: true, maxOutputTokens: true },
  });
  if (row) cache?.models.set(row.id, row);
  return row ?? undefined;
}
