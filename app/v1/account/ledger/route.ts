import { z } from "zod";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { LEDGER_PAGE_DEFAULT, LEDGER_PAGE_MAX, listAccountLedger } from "@/lib/ledger/history";

export const dynamic = "force-dynamic";

const LedgerQuery = z.strictObject({
  cursor: z.string().min(1).max(64).optional(),
  limit: z.coerce.number().int().min(1).max(LEDGER_PAGE_MAX).default(LEDGER_PAGE_DEFAULT),
});

// GET /v1/account/ledger – this account's own ledger lines, newest first, signed from its point of view
export const GET = route({ auth: "session", query: LedgerQuery }, async ({ query, session }) =>
  ok(await listAccountLedger(session.accountId, query)),
);
