import { z } from "zod";
import { PageQuery } from "@/lib/pagination";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { listAccountLedger } from "@/lib/ledger/history";
import { checkLedgerRange, LedgerFilterFields, LedgerPageSchema } from "@/lib/ledger/schemas";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

const LedgerQuery = PageQuery.extend({
  ...LedgerFilterFields,
  group: z
    .enum(["none", "day"])
    .default("none")
    .describe("day: the clears of one UTC day are one item per offer (earnings) or per model (balance), with `count`"),
}).superRefine(checkLedgerRange);

// GET /v1/account/ledger – this account's own ledger lines, newest first, signed from its point of view
export const GET = route(
  {
    auth: "session",
    query: LedgerQuery,
    docs: {
      operationId: "listLedger",
      tag: "Account",
      summary: "The account's ledger lines",
      description:
        "Newest first, signed from this account's point of view, each with the balance right after it; pass `next_cursor` as `cursor` for the next page (with the same filter). GET /v1/account/ledger/export gives the same lines as CSV.",
      responses: [response(200, LedgerPageSchema, "One page of ledger lines.")],
    },
  },
  async ({ query, session }) => ok(await listAccountLedger(session.accountId, query)),
);
