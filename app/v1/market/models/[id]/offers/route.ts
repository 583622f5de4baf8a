import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { listModelOffers } from "@/lib/market/quality/offers";
import { ModelOfferListSchema } from "@/lib/market/schemas";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/market/models/{id}/offers – each live offer of a model: price, measured quality, declarations, probes
export const GET = route(
  {
    auth: "public",
    rateLimit: true,
    docs: {
      operationId: "listModelOffers",
      tag: "Market",
      summary: "A model's offers",
      description:
        "Each live offer of the model (active; on the book or not, probe-flagged ones included and marked), cheapest first, then oldest (at most 200, the cheapest): its price and what 1M input and output tokens cost at it, capacity left today, what real traffic measured over the last hour and day (success rate, dispute rate, upstream latency p50/p95, throughput; null below `min_requests` forwards), what its supplier declares (quantization, data policy, limits) and what the platform's fidelity probes found. Shared for a few seconds.",
      pathParams: { id: "The model's id, e.g. llama-3.3-70b (URL-encoded when it holds a /)." },
      responses: [response(200, ModelOfferListSchema, "The model's live offers, cheapest first, then oldest.")],
      errors: ["invalid_request", "model_not_found"],
    },
  },
  async ({ params }) => ok(await listModelOffers(params.id)),
);
