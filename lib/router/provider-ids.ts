import "server-only";
import { db } from "@/lib/db";
import { AppError } from "@/lib/errors";
import type { ProviderPreferences } from "@/lib/router/provider-schemas";

/**
 * The offer and supplier ids of stored default preferences (a key's or an account's provider_preferences) must each
 * name an offer or a supplier with offers, as a request's own must (svc_reserve_batch checks those in its own round
 * trip): checked once here, when they are set, by the same rule (svc_supplier_public_id). `where` names the field in
 * the 400 (e.g. "provider_preferences").
 */
export async function assertProviderIdsExist(prefs: ProviderPreferences | null | undefined, where: string): Promise<void> {
  if (!prefs) return;
  for (const field of ["only", "ignore"] as const) {
    const ids = prefs[field] ?? [];
    if (ids.length === 0) continue;
    // Each supplier's public id is computed once (not once per id listed).
    const [row] = await db.$queryRaw<{ id: string | null }[]>`
      WITH suppliers AS MATERIALIZED (
        SELECT svc_supplier_public_id(s.supplier_id) AS id FROM (SELECT DISTINCT supplier_id FROM offers) s
        WHERE EXISTS (SELECT 1 FROM unnest(${ids}::text[]) x(id) WHERE left(x.id, 4) = 'sup_')
      )
      SELECT (SELECT x.id FROM unnest(${ids}::text[]) WITH ORDINALITY AS x(id, n)
              WHERE CASE WHEN left(x.id, 4) = 'sup_' THEN NOT EXISTS (SELECT 1 FROM suppliers s WHERE s.id = x.id)
                         ELSE NOT EXISTS (SELECT 1 FROM offers o WHERE o.id = x.id::uuid) END
              ORDER BY x.n LIMIT 1) AS id`;
    if (row.id !== null) {
      const param = `${where}.${field}`;
      throw new AppError(
        "invalid_request",
        `${param}: ${row.id} is neither an offer nor a supplier on svc (offer ids and supplier ids are listed by GET /v1/market/models/{id}/offers).`,
        { details: { param } },
      );
    }
  }
}
