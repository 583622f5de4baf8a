import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getPoolSummary } from "@/lib/market/pool";
import { PoolSummarySchema } from "@/lib/market/schemas";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/supply/pool/summary – today's supply pool: suppliers, capacity, prices, utilisation
export const GET = route(
  {
    auth: "public",
    docs: {
      operationId: "getPoolSummary",
      tag: "Supply",
      summary: "Today's supply pool",
      responses: [response(200, PoolSummarySchema, "Suppliers, capacity, prices and utilisation today (UTC).")],
    },
  },
  async () => ok(await getPoolSummary()),
);
