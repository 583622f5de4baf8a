import { PageQuery } from "@/lib/pagination";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { listAccountLedger } from "@/lib/ledger/history";
import { LedgerPageSchema } from "@/lib/ledger/schemas";
import { response } from "@/lib/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/account/ledger – this account's own ledger lines, newest first, signed from its point of view
export const GET = route(
  {
    auth: "session",
    query: PageQuery,
    docs: {
      operationId: "listLedger",
      tag: "Account",
      summary: "The account's ledger lines",
      description: "Newest first, signed from this account's point of view; pass `next_cursor` as `cursor` for the next page.",
      responses: [response(200, LedgerPageSchema, "One page of ledger lines.")],
    },
  },
  async ({ query, session }) => ok(await listAccountLedger(session.accountId, query)),
);
