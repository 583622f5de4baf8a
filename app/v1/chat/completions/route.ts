import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import {
  assertNotForwardedBySvc,
  COMPLETION_PIPELINE_DOCS,
  COST_HEADER_NAMES,
  costHeaders,
  ignoredFieldsHeader,
  readMaxPriceHeader,
} from "@/lib/http/svc-headers";
import { response } from "@/lib/http/openapi/operation";
import { completeChat } from "@/lib/router/complete";
import { ChatCompletionRequest, ChatCompletionSchema, ignoredChatFields } from "@/lib/router/schemas";

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
        "OpenAI-compatible: tools, tool_choice, content parts (text, image_url), response_format (json_object, json_schema), logprobs and the sampling fields. Reserves the worst case (prompt plus max_tokens, or the model's output cap, at the chosen offer's price; when you ask for reasoning on a model that bills it, plus the reasoning budget: reasoning.max_tokens, else a default by effort, within the model's cap; max_completion_tokens, when sent, is the whole) on the cheapest eligible offer at or below your max price that serves the features the request uses, forwards once, then charges the usage checked against svc's own count and releases the rest. `usage.cost` (USD, a JSON number, as OpenRouter's clients read it) and `usage.cost_details` (exact decimal strings: charge, supplier share, platform fee, burn, the offer's price, the tokens billed beside the upstream's claim, reasoning tokens included; hidden reasoning is billed at most up to the reasoning budget and what the answer makes plausible) are the clear's own journal entry, to the micro-unit. `X-Svc-Generation-Id` (the completion's id) finds the record later at GET /v1/generations/{id}. `stream: true` is refused (stream_not_supported, ahead of any other problem). The optional `provider` object (OpenRouter's names: sort by price, latency or throughput; only/ignore offers or suppliers; quantizations; data_collection; max_price per 1M tokens; soft preferred_max_latency and preferred_min_throughput; require_parameters and allow_fallbacks accepted with no effect) chooses among the offers, merged field by field over the key's and the account's provider_preferences; when it leaves no offer the 503 names the preference (no_offer_matches_provider_*). OpenRouter's sampling fields top_k, min_p and repetition_penalty are forwarded as sent; the fields OpenRouter's and OpenAI's clients send that svc has no use for (models, route, transforms, top_a, usage, service_tier, prompt_cache_key, safety_identifier, verbosity, store, prediction, modalities [\"text\"]) are accepted, each described below with why, and the answer's X-Svc-Ignored-Fields names those the request sent.",
      ...COMPLETION_PIPELINE_DOCS,
      requestExample: { model: "llama-3.3-70b", messages: [{ role: "user", content: "Hello" }], max_tokens: 200, temperature: 0.7 },
      responses: [
        response(200, ChatCompletionSchema, "The completion; usage.cost_details and the headers say what it cost.", COST_HEADER_NAMES),
      ],
    },
  },
  async ({ req, body, apiKey }) => {
    assertNotForwardedBySvc(req);
    const { completion, cost } = await completeChat({ body, apiKey, requestedMaxPriceCents: readMaxPriceHeader(req) });
    return ok(completion, { ...costHeaders(cost, completion.id), ...ignoredFieldsHeader(ignoredChatFields(body)) });
  },
);
