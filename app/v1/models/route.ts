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
      description:
        "The buyable models in OpenAI's list shape, with list price (diem per 1M tokens), the best posted price, and OpenRouter's `pricing.prompt` and `pricing.completion` (USD per token at the cheapest offer, by the charge rule).",
      responses: [response(200, ModelListSchema, "The models.")],
    },
  },
  async () => ok(await listModels()),
);
