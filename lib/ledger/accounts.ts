import "server-only";
import { db, type Tx } from "@/lib/db/client";

/** The ledger accounts that belong to a user; platform and external are system accounts at fixed ids. */
export type OwnedLedgerKind = "buyer" | "supplier";

export type LedgerAccountRow = {
  id: string;
  kind: OwnedLedgerKind;
  ownerId: string;
  balanceMicros: bigint;
  heldMicros: bigint;
  /** What can be spent or withdrawn now: the balance less what in-flight completions hold. */
  availableMicros: bigint;
};

export type Balance = { totalMicros: bigint; heldMicros: bigint; availableMicros: bigint };

/** The buyer's balance or the supplier's earnings account of an owner, created empty on first use. */
export async function getOrCreateLedgerAccount(tx: Tx, kind: OwnedLedgerKind, ownerId: string): Promise<LedgerAccountRow> {
  await tx.$executeRaw`
    INSERT INTO ledger_accounts (kind, owner_id) VALUES (${kind}::ledger_account_kind, ${ownerId}::uuid)
    ON CONFLICT (kind, owner_id) DO NOTHING`;
  // A separate statement: under READ COMMITTED it sees a row a concurrent transaction inserted first.
  const account = await findLedgerAccount(tx, kind, ownerId);
  if (!account) throw new Error(`ledger account ${kind}/${ownerId} vanished after its upsert`);
  return account;
}

export async function findLedgerAccount(tx: Tx, kind: OwnedLedgerKind, ownerId: string): Promise<LedgerAccountRow | null> {
  const rows = await tx.$queryRaw<{ id: string; balance_micros: bigint; held_micros: bigint }[]>`
    SELECT id::text, balance_micros, held_micros FROM ledger_accounts
    WHERE kind = ${kind}::ledger_account_kind AND owner_id = ${ownerId}::uuid`;
  const row = rows[0];
  if (!row) return null;
  const balanceMicros = BigInt(row.balance_micros);
  const heldMicros = BigInt(row.held_micros);
  return { id: row.id, kind, ownerId, balanceMicros, heldMicros, availableMicros: balanceMicros - heldMicros };
}

/** An owner's balance of one kind; zero when the account does not exist yet. */
export async function getBalance(kind: OwnedLedgerKind, ownerId: string, tx: Tx = db): Promise<Balance> {
  const account = await findLedgerAccount(tx, kind, ownerId);
  return {
    totalMicros: account?.balanceMicros ?? 0n,
    heldMicros: account?.heldMicros ?? 0n,
    availableMicros: account?.availableMicros ?? 0n,
  };
}
