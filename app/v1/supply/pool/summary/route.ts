import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getPoolSummary } from "@/lib/market/pool";

export const dynamic = "force-dynamic";

// GET /v1/supply/pool/summary – today's supply pool: suppliers, capacity, prices, utilisation
export const GET = route({ auth: "public" }, async () => ok(await getPoolSummary()));
