import { created, ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";
import { afterOfferSaved } from "@/lib/probes/probation";
import { createOffer } from "@/lib/supply/create-offer";
import { listOffers } from "@/lib/supply/list-offers";
import { CheckedOfferSchema, CreateOfferBody, ListOffersQuery, OfferListSchema } from "@/lib/supply/schemas";
import { UPSTREAM_CHECK_ERRORS } from "@/lib/supply/upstream-check";

export const dynamic = "force-dynamic";

// GET /v1/supply/offers – the caller's offers with today's capacity, earnings and health
export const GET = route(
  {
    auth: "session",
    query: ListOffersQuery,
    docs: {
      operationId: "listOffers",
      tag: "Supply",
      summary: "List your offers",
      responses: [response(200, OfferListSchema, "Your offers with today's capacity, earnings and health.")],
    },
  },
  async ({ session, query }) => ok(await listOffers(session.accountId, query)),
);

// POST /v1/supply/offers – post an offer; its upstream is checked first, the key is stored encrypted, its probe set runs now
export const POST = route(
  {
    auth: "session",
    body: CreateOfferBody,
    docs: {
      operationId: "createOffer",
      tag: "Supply",
      summary: "Post an offer",
      description:
        "The upstream is checked first (GET {upstream_base_url}/models with the key); the key is stored encrypted and never returned. Optionally declare what the upstream serves: quantization, data_policy, context_tokens, max_output_tokens (your word, published with the offer).",
      requestExample: {
        upstream_base_url: "https://api.venice.ai/api/v1",
        upstream_api_key: "your-upstream-api-key",
        models: [{ id: "llama-3.3-70b", upstream_model: "llama-3.3-70b" }],
        price_cents: 85,
        daily_capacity: "25",
        quantization: "fp8",
        data_policy: { retains_prompts: false, trains_on_prompts: false },
      },
      responses: [response(201, CheckedOfferSchema, "The posted offer.")],
      errors: [...UPSTREAM_CHECK_ERRORS, "unprocessable"],
    },
  },
  async ({ session, body }) => created(afterOfferSaved(await createOffer(session.accountId, body))),
);
