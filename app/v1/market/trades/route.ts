import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { TradeListSchema, TradesQuery } from "@/lib/market/schemas";
import { listTrades } from "@/lib/market/trades";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/market/trades?model=&limit= – recent clears, newest first, without identities
export const GET = route(
  {
    auth: "public",
    query: TradesQuery,
    docs: {
      operationId: "listTrades",
      tag: "Market",
      summary: "Recent trades",
      responses: [response(200, TradeListSchema, "Recent clears, newest first, without identities.")],
      errors: ["model_not_found"],
    },
  },
  async ({ query }) => ok(await listTrades(query)),
);
