import { json } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";
import { HealthSchema } from "@/lib/ops/schemas";
import { getPublicHealth } from "@/lib/ops/service-health";

export const dynamic = "force-dynamic";

// GET /healthz – "ok" (200) when the database and the chain answer, else "degraded" (503); details only in the logs
export const GET = route(
  {
    auth: "public",
    rateLimit: true,
    docs: {
      operationId: "getHealth",
      tag: "Operations",
      summary: "Health check",
      responses: [
        response(200, HealthSchema, "Database and chain answer."),
        response(503, HealthSchema, "Degraded: one of them does not (which one is logged, not answered)."),
      ],
    },
  },
  async () => {
    const health = await getPublicHealth();
    return json(health, { status: health.status === "ok" ? 200 : 503, headers: { "cache-control": "no-store" } });
  },
);
