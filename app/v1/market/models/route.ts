import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { listMarketModels } from "@/lib/market/models";
import { MarketModelListSchema } from "@/lib/market/schemas";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/market/models – every model with list price, best price, capacity and supplier count on the book
export const GET = route(
  {
    auth: "public",
    docs: {
      operationId: "listMarketModels",
      tag: "Market",
      summary: "Models on the market",
      responses: [response(200, MarketModelListSchema, "Every model with list price, best price, capacity and supplier count.")],
    },
  },
  async () => ok(await listMarketModels()),
);
