import { route } from "@/lib/http/route";
import { exportLedgerCsv } from "@/lib/ledger/export-csv";
import { LedgerExportQuery } from "@/lib/ledger/schemas";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/account/ledger/export – the ledger lines of a filter as a CSV download, one row per journal line
export const GET = route(
  {
    auth: "session",
    query: LedgerExportQuery,
    docs: {
      operationId: "exportLedger",
      tag: "Account",
      summary: "The account's ledger lines as CSV",
      description:
        "text/csv, newest first, one row per journal line with a header row: created_at, entry_id, kind, ledger, amount, balance_after, model, offer, transaction, generation_id (amounts exact, 6 decimals). At most 100000 lines: a range holding more is a 400; narrow `from`/`to`.",
      responses: [response(200, null, "The CSV file (Content-Disposition: attachment).")],
    },
  },
  async ({ query, session }) => {
    const body = await exportLedgerCsv(session.accountId, query);
    const name = `svc-ledger${query.type ? `-${query.type}` : ""}${query.from ? `-from-${query.from}` : ""}${query.to ? `-to-${query.to}` : ""}.csv`;
    return new Response(body, {
      status: 200,
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="${name}"`,
        "cache-control": "no-store",
      },
    });
  },
);
