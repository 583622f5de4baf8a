import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getMarketHistory } from "@/lib/market/history";
import { HistoryQuery, MarketHistorySchema } from "@/lib/market/schemas";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/market/history?model=&range= – a model's price and volume in round-time buckets, empty buckets included
export const GET = route(
  {
    auth: "public",
    query: HistoryQuery,
    docs: {
      operationId: "getMarketHistory",
      tag: "Market",
      summary: "Price and volume history",
      description:
        "Every bucket of the range, oldest first: trades, volume, burn and the volume-weighted price (null where nothing traded).",
      responses: [response(200, MarketHistorySchema, "The model's history over the range.")],
      errors: ["model_not_found"],
    },
  },
  async ({ query }) => ok(await getMarketHistory(query)),
);
