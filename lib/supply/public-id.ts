/**
 * A supplier's public id: what a buyer is shown of who served a completion (GET /v1/generations/{id}). The market
 * views name no supplier, and a supplier's wallet is never shown to buyers, so this is a pseudonym: `sup_` and 24 hex
 * digits of SHA-256 over the supplier's account id. Stable (the same for every offer of one supplier, on every
 * instance, across deploys: no key to rotate), and it tells nothing of the account: the account id is a random UUID
 * (122 random bits), so the hash cannot be walked back to it, let alone to the wallet.
 */
import "server-only";
import { createHash } from "node:crypto";

export function supplierPublicId(supplierAccountId: string): string {
  return `sup_${createHash("sha256").update(`svc supplier:${supplierAccountId}`).digest("hex").slice(0, 24)}`;
}
