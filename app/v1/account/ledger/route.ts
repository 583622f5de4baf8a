import { PageQuery } from "@/lib/http/pagination";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { listAccountLedger } from "@/lib/ledger/history";

export const dynamic = "force-dynamic";

// GET /v1/account/ledger – this account's own ledger lines, newest first, signed from its point of view
export const GET = route({ auth: "session", query: PageQuery }, async ({ query, session }) =>
  ok(await listAccountLedger(session.accountId, query)),
);
