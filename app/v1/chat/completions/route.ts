import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { assertNotForwardedBySvc, costHeaders, readMaxPriceHeader } from "@/lib/http/svc-headers";
import { response } from "@/lib/openapi/operation";
import { completeChat } from "@/lib/router/complete";
import { ChatCompletionRequest, ChatCompletionSchema } from "@/lib/router/schemas";

export const dynamic = "force-dynamic";

// POST /v1/chat/completions – route to the cheapest eligible offer, forward once, meter and clear
export const POST = route(
  {
    auth: "bearer",
    body: ChatCompletionRequest,
    rateLimit: true,
    docs: {
      operationId: "createChatCompletion",
      tag: "Inference",
      summary: "Create a chat completion",
      description:
        "OpenAI-compatible: tools, tool_choice, content parts (text, image_url), response_format (json_object, json_schema), logprobs and the sampling fields. Reserves the worst case (prompt plus max_tokens, or the model's output cap, at the chosen offer's price) on the cheapest eligible offer at or below your max price that serves the features the request uses, forwards once, then charges the usage checked against svc's own count and releases the rest. `usage.cost` (USD, a JSON number, as OpenRouter's clients read it) and `usage.cost_details` (exact decimal strings: charge, supplier share, platform fee, burn, the offer's price, the tokens billed beside the upstream's claim) are the clear's own journal entry, to the micro-unit. `X-Svc-Generation-Id` (the completion's id) finds the record later at GET /v1/generations/{id}. `stream: true` is refused (stream_not_supported, ahead of any other problem).",
      requestHeaders: ["MaxCentsHeader"],
      responses: [
        response(200, ChatCompletionSchema, "The completion; usage.cost_details and the headers say what it cost.", [
          "BalanceRemaining",
          "SvcGenerationId",
          "SvcCost",
          "SvcPriceCents",
          "SvcBurnDiem",
          "SvcMaxCents",
        ]),
      ],
      errors: [
        "stream_not_supported",
        "context_length_exceeded",
        "max_price_above_key_cap",
        "model_not_found",
        "model_retired",
        "insufficient_balance",
        "spend_limit_exceeded",
        "upstream_error",
        "upstream_rejected_request",
        "loop_detected",
        "no_offer_at_or_below_max",
        "no_capacity",
        "no_healthy_supplier",
        "no_offer_supports_tools",
        "no_offer_supports_json_schema",
        "no_offer_supports_vision",
      ],
      errorHeaders: { 503: ["SvcErrorCode", "SvcBuyerMaxCents", "SvcCheapestPostedCents", "SvcRoutableDiemAboveMax"] },
    },
  },
  async ({ req, body, apiKey }) => {
    assertNotForwardedBySvc(req);
    const { completion, cost } = await completeChat({ body, apiKey, requestedMaxPriceCents: readMaxPriceHeader(req) });
    return ok(completion, costHeaders(cost, completion.id));
  },
);
