import { json } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getLedgerHealth } from "@/lib/ledger/ledger-health";

export const dynamic = "force-dynamic";

// GET /healthz/ledger – the ledger invariants for operators: 200 when they hold, 503 with a violation count (or check_failed) when not
export const GET = route({ auth: "public" }, async () => {
  const health = await getLedgerHealth();
  return json(health, { status: health.ok ? 200 : 503, headers: { "cache-control": "no-store" } });
});
