import { json } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/openapi/operation";
import { HealthSchema } from "@/lib/ops/schemas";
import { checkHealth } from "@/lib/ops/service-health";

export const dynamic = "force-dynamic";

// GET /healthz – database and chain reachability: 200 when both answer, else 503
export const GET = route(
  {
    auth: "public",
    docs: {
      operationId: "getHealth",
      tag: "Operations",
      summary: "Health check",
      responses: [response(200, HealthSchema, "Database and chain answer."), response(503, HealthSchema, "Degraded: one of them does not.")],
    },
  },
  async () => {
    const health = await checkHealth();
    return json(health, { status: health.status === "ok" ? 200 : 503, headers: { "cache-control": "no-store" } });
  },
);
