import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { costHeaders, readMaxPriceHeader } from "@/lib/http/svc-headers";
import { response } from "@/lib/openapi/operation";
import { completeChat } from "@/lib/router/complete";
import { ChatCompletionRequest } from "@/lib/router/request";
import { ChatCompletionSchema } from "@/lib/router/response";

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
        "OpenAI-compatible. Reserves the worst case (prompt plus max_tokens, or the model's output cap, at the chosen offer's price) on the cheapest eligible offer at or below your max price, forwards once, then charges the actual usage and releases the rest. `stream: true` is refused.",
      requestHeaders: ["MaxCentsHeader"],
      responses: [
        response(200, ChatCompletionSchema, "The completion; the headers say what it cost.", [
          "BalanceRemaining",
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
        "insufficient_balance",
        "spend_limit_exceeded",
        "upstream_error",
        "no_offer_at_or_below_max",
        "no_capacity",
        "no_healthy_supplier",
      ],
      errorHeaders: { 503: ["SvcErrorCode", "SvcBuyerMaxCents", "SvcCheapestPostedCents", "SvcRoutableDiemAboveMax"] },
    },
  },
  async ({ req, body, apiKey }) => {
    const { completion, cost } = await completeChat({ body, apiKey, requestedMaxPriceCents: readMaxPriceHeader(req) });
    return ok(completion, costHeaders(cost));
  },
);
