import { route } from "@/lib/http/route";
import { json } from "@/lib/http/responses";
import { getPublicHealth } from "@/lib/ops/health";

export const dynamic = "force-dynamic";

// GET /healthz – "ok" (200) when the database and the chain answer, else "degraded" (503); details only in the logs
export const GET = route({ auth: "public", rateLimit: true }, async () => {
  const health = await getPublicHealth();
  return json(health, { status: health.status === "ok" ? 200 : 503, headers: { "cache-control": "no-store" } });
});
