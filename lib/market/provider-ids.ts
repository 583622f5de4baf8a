import "server-only";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import type { ProviderPreferences } from "@/lib/market/provider-schemas";
import { isSupplierPublicId } from "@/lib/supply/public-id";

const SUPPLIER_PREFIX = "sup_";

/**
 * The supplier ids a request's own `provider` names (`only`, `ignore`) must each be a supplier with offers: checked
 * here, before the reservation, against the process's set of supplier public ids (lib/supply/public-id.ts), so no
 * request makes the database hash every supplier. Its offer ids are checked by the reservation itself, in its own
 * round trip (svc_reserve_batch: one primary-key lookup each).
 */
export async function assertRequestSupplierIds(prefs: ProviderPreferences | null): Promise<void> {
  if (!prefs) return;
  for (const field of ["only", "ignore"] as const) {
    for (const id of prefs[field] ?? []) {
      if (id.startsWith(SUPPLIER_PREFIX) && !(await isSupplierPublicId(id))) throw unknownProviderId(`provider.${field}`, id);
    }
  }
}

/**
 * The offer and supplier ids of stored default preferences (a key's or an account's provider_preferences) must each
 * name an offer or a supplier with offers, as a request's own must: checked once, when they are set. `where` names the
 * field in the 400 (e.g. "provider_preferences").
 */
export async function assertProviderIdsExist(prefs: ProviderPreferences | null | undefined, where: string): Promise<void> {
  if (!prefs) return;
  for (const field of ["only", "ignore"] as const) {
    const ids = prefs[field] ?? [];
    const offerIds = ids.filter((id) => !id.startsWith(SUPPLIER_PREFIX));
    const offers =
      offerIds.length === 0
        ? new Set<string>()
        : new Set((await db.$queryRaw<{ id: string }[]>`SELECT id::text FROM offers WHERE id = ANY(${offerIds}::uuid[])`).map((r) => r.id));
    for (const id of ids) {
      const known = id.startsWith(SUPPLIER_PREFIX) ? await isSupplierPublicId(id) : offers.has(id);
      if (!known) throw unknownProviderId(`${where}.${field}`, id);
    }
  }
}

/** An id of provider.only or provider.ignore that names neither an offer nor a supplier. */
export function unknownProviderId(param: string, id: string) {
  return new AppError(
    "invalid_request",
    `${param}: ${id} is neither an offer nor a supplier on svc (offer ids and supplier ids are listed by GET /v1/market/models/{id}/offers). Nothing was charged.`,
    { details: { param } },
  );
}
