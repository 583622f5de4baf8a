import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { listModels } from "@/lib/market/models";
import { ModelListSchema } from "@/lib/market/schemas";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/models – the buyable models (OpenAI list shape) with list and best posted prices
export const GET = route(
  {
    auth: "public",
    docs: {
      operationId: "listModels",
      tag: "Market",
      summary: "List models",
      description: "The buyable models in OpenAI's list shape, with list price and the best posted price.",
      responses: [response(200, ModelListSchema, "The models.")],
    },
  },
  async () => ok(await listModels()),
);
