import { json } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getLedgerHealth } from "@/lib/ledger/ledger-health";
import { LedgerHealthSchema } from "@/lib/ledger/schemas";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /healthz/ledger – the ledger invariants for operators: 200 when they hold, 503 with a violation count (or check_failed) when not
export const GET = route(
  {
    auth: "public",
    docs: {
      operationId: "getLedgerHealth",
      tag: "Operations",
      summary: "Ledger invariants",
      responses: [
        response(200, LedgerHealthSchema, "The invariants hold."),
        response(503, LedgerHealthSchema, "Violations found (a count, never accounts), or the check failed."),
      ],
    },
  },
  async () => {
    const health = await getLedgerHealth();
    return json(health, { status: health.ok ? 200 : 503, headers: { "cache-control": "no-store" } });
  },
);
