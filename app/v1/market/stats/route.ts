import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { MarketStatsSchema } from "@/lib/market/schemas";
import { getMarketStats } from "@/lib/market/stats";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/market/stats – last 24 h: clears, volume in USDC and diem, VWAP per model
export const GET = route(
  {
    auth: "public",
    docs: {
      operationId: "getMarketStats",
      tag: "Market",
      summary: "Market statistics, last 24 h",
      responses: [response(200, MarketStatsSchema, "Clears, volume in USDC and diem, VWAP per model.")],
    },
  },
  async () => ok(await getMarketStats()),
);
