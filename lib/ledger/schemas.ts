/** The ledger's shapes on the wire: an account's own history and the public invariant health. */
import { z } from "zod";
import { component, pageOf, Timestamp, Usdc } from "@/lib/wire";

const LedgerItemSchema = z.object({
  id: z.string().describe("The journal entry (one movement of money)"),
  kind: z.enum(["topup", "clear", "withdrawal", "withdrawal_reversal", "probe"]),
  ledger: z.enum(["balance", "earnings"]).describe("Which balance moved: the prepaid buying balance or the supplier earnings"),
  amount: Usdc.describe("Signed from this account's point of view: positive credits it"),
  created_at: Timestamp,
  transaction: z.string().nullable(),
  balance_after: Usdc.describe("The balance of `ledger` right after this line (after the newest line of a group), from the ledger"),
  model: z.string().nullable().describe("The model of a clear or probe; null for money in and out"),
  offer: z.string().nullable().describe("Your own offer that earned a clear or probe (earnings lines); null otherwise"),
  generation_id: z
    .string()
    .nullable()
    .describe(
      "The generation you paid for (chatcmpl-…, as GET /v1/generations/{id} takes it) on a clear line of your balance; null otherwise",
    ),
  count: z
    .number()
    .int()
    .describe(
      "Journal lines this item stands for: 1, or with `group=day` the clears of one UTC day and offer (earnings) or model (balance)",
    ),
});
export type LedgerItem = z.output<typeof LedgerItemSchema>;

export const LedgerPageSchema = component("LedgerPage", pageOf(LedgerItemSchema));
export type LedgerPage = z.output<typeof LedgerPageSchema>;

/** What the history can show apart: money in, money out, buying, earning. */
export const LEDGER_TYPES = ["topup", "withdrawal", "usage", "earnings"] as const;
export type LedgerType = (typeof LEDGER_TYPES)[number];

const IsoDay = z.iso.date("must be a UTC day, YYYY-MM-DD");

/** The filter the history list and its CSV export share (all optional; days are UTC and inclusive). */
export const LedgerFilterFields = {
  type: z
    .enum(LEDGER_TYPES)
    .optional()
    .describe("topup, withdrawal (and returned withdrawals), usage (requests you paid for) or earnings (requests your offers served)"),
  from: IsoDay.optional().describe("First UTC day, YYYY-MM-DD"),
  to: IsoDay.optional().describe("Last UTC day, YYYY-MM-DD (inclusive)"),
  offer: z.uuid().optional().describe("Only lines of this offer of yours"),
  model: z.string().min(1).max(128).optional().describe("Only clears and probes of this model"),
};
export type LedgerFilter = { type?: LedgerType; from?: string; to?: string; offer?: string; model?: string };

/** `from` after `to` names nothing: said as the API's invalid_request on `to`. */
export function checkLedgerRange(filter: { from?: string; to?: string }, ctx: z.RefinementCtx): void {
  if (filter.from && filter.to && filter.from > filter.to) {
    ctx.addIssue({ code: "custom", path: ["to"], message: "must be the same day as `from` or later" });
  }
}

export const LedgerExportQuery = z.strictObject(LedgerFilterFields).superRefine(checkLedgerRange);

export const LedgerHealthSchema = component(
  "LedgerHealth",
  z.union([
    z.object({ ok: z.literal(true), checked_at: Timestamp }),
    z.object({ ok: z.literal(false), checked_at: Timestamp, violations: z.number().int() }),
    z.object({ ok: z.literal(false), checked_at: Timestamp, error: z.literal("check_failed") }),
  ]),
);
export type LedgerHealth = z.output<typeof LedgerHealthSchema>;
