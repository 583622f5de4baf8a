/**
 * A supplier's public id: what a buyer is shown of who served a completion (GET /v1/generations/{id}). The market
 * views name no supplier, and a supplier's wallet is never shown to buyers, so this is a pseudonym: `sup_` and 24 hex
 * digits of SHA-256 over the supplier's account id. Stable (the same for every offer of one supplier, on every
 * instance, across deploys: no key to rotate), and it tells nothing of the account: the account id is a random UUID
 * (122 random bits), so the hash cannot be walked back to it, let alone to the wallet.
 */
import "server-only";
import { createHash } from "node:crypto";
import { db } from "@/lib/db/client";
import { processState } from "@/lib/process-state";

export function supplierPublicId(supplierAccountId: string): string {
  return `sup_${createHash("sha256").update(`svc supplier:${supplierAccountId}`).digest("hex").slice(0, 24)}`;
}

/** The most often a process reads the suppliers again for an id it does not know: made-up ids cost one read a second. */
const MIN_READ_INTERVAL_MS = 1_000;
/** How long a known id is trusted without reading again. */
const TRUST_MS = 60_000;

const known = processState("supplier-public-ids", () => ({
  ids: new Set<string>(),
  /** When the last read started (performance.now(); 0: never): a read that starts after a miss answers it. */
  startedAt: 0,
  reading: null as Promise<void> | null,
}));

/**
 * Whether a public id names a supplier with an offer (provider.only and provider.ignore name suppliers by it). The
 * ids are hashed once per read of the suppliers and kept per process, so a buyer's `sup_` ids cost a set lookup: no
 * request makes the database hash every supplier. An id not in the set waits for a read that starts after it was
 * asked (the supplier may have just posted its first offer): reads start at most once a second per process, and
 * every miss meanwhile shares the next one. Exact, then, for a supplier that has posted; a made-up id costs its
 * request up to a second, never the database more than one read a second.
 */
export async function isSupplierPublicId(id: string): Promise<boolean> {
  const askedAt = performance.now();
  if (known.ids.has(id) && askedAt - known.startedAt < TRUST_MS) return true;
  while (known.startedAt <= askedAt) {
    if (known.reading) {
      await known.reading;
      continue;
    }
    const wait = known.startedAt + MIN_READ_INTERVAL_MS - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    else await readSuppliers();
  }
  await known.reading;
  return known.ids.has(id);
}

function readSuppliers(): Promise<void> {
  known.startedAt = performance.now();
  known.reading = db.$queryRaw<{ id: string }[]>`SELECT DISTINCT supplier_id::text AS id FROM offers`
    .then((rows) => {
      known.ids = new Set(rows.map((r) => supplierPublicId(r.id)));
    })
    .finally(() => {
      known.reading = null;
    });
  return known.reading;
}
