/** The ledger's shapes on the wire: an account's own history and the public invariant health. */
import { z } from "zod";
import { component, pageOf, Timestamp, Usdc } from "@/lib/wire";

const LedgerItemSchema = z.object({
  id: z.string().describe("The journal entry (one movement of money)"),
  kind: z.enum(["topup", "clear", "withdrawal", "withdrawal_reversal"]),
  ledger: z.enum(["balance", "earnings"]).describe("Which balance moved: the prepaid buying balance or the supplier earnings"),
  amount: Usdc.describe("Signed from this account's point of view: positive credits it"),
  created_at: Timestamp,
  transaction: z.string().nullable(),
});
export type LedgerItem = z.output<typeof LedgerItemSchema>;

export const LedgerPageSchema = component("LedgerPage", pageOf(LedgerItemSchema));
export type LedgerPage = z.output<typeof LedgerPageSchema>;

export const LedgerHealthSchema = component(
  "LedgerHealth",
  z.union([
    z.object({ ok: z.literal(true), checked_at: Timestamp }),
    z.object({ ok: z.literal(false), checked_at: Timestamp, violations: z.number().int() }),
    z.object({ ok: z.literal(false), checked_at: Timestamp, error: z.literal("check_failed") }),
  ]),
);
export type LedgerHealth = z.output<typeof LedgerHealthSchema>;
