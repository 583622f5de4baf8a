import { route } from "@/lib/http/route";
import { json } from "@/lib/http/responses";
import { checkHealth } from "@/lib/ops/service-health";

export const dynamic = "force-dynamic";

// GET /healthz – database and chain reachability: 200 when both answer, else 503
export const GET = route({ auth: "public" }, async () => {
  const health = await checkHealth();
  return json(health, { status: health.status === "ok" ? 200 : 503, headers: { "cache-control": "no-store" } });
});
