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
import { ignoredResponsesFields, ResponseSchema, ResponsesRequest } from "@/lib/router/responses-schemas";
import { toChatRequest, toResponse } from "@/lib/router/responses-translation";

export const dynamic = "force-dynamic";

// POST /v1/responses – the Responses API's stateless subset, served as one chat completion (the same pipeline, one clear)
export const POST = route(
  {
    auth: "bearer",
    body: ResponsesRequest,
    rateLimit: true,
    docs: {
      operationId: "createResponse",
      tag: "Inference",
      summary: "Create a response (OpenAI Responses API, stateless)",
      description:
        "OpenAI's Responses API for agents' frameworks, served as one chat completion: the same key checks, rate limits, max price, feature routing, reservation, metering and clear as POST /v1/chat/completions, and one clear per response. `input` is a string or items (`message` with input_text and input_image parts, `function_call`, `function_call_output`; `reasoning` items are accepted and not forwarded); `instructions`; `tools` of type function (with `strict`), `tool_choice`, `parallel_tool_calls`; `text.format` (text, json_object, json_schema); `max_output_tokens`; `temperature`; `top_p`; `top_k`, `min_p`, `repetition_penalty` (forwarded); `reasoning.effort` and `reasoning.max_tokens` (the reasoning budget, as on chat completions); `metadata`; `user`. svc stores nothing: `store: true` is accepted and the answer says `store: false`; `previous_response_id`, `conversation`, `background`, `prompt` and built-in tools (web search, file search, computer use, ...) are refused with a 400 naming the field, before anything is reserved; `stream: true` is stream_not_supported. OpenRouter's and OpenAI's fields svc has no use for (models, route, transforms, top_a, usage, service_tier, prompt_cache_key, safety_identifier, include, truncation auto, top_logprobs, max_tool_calls, text.verbosity) are accepted and named in X-Svc-Ignored-Fields. The answer's `status` is `incomplete` (with `incomplete_details.reason` max_output_tokens) when the model stopped at the output cap. `provider` chooses among the offers as on chat completions. `usage.cost` and `usage.cost_details` are the clear's own journal entry, as on chat completions; `X-Svc-Generation-Id` is the generation's id (chatcmpl-… with the response id's random part) for GET /v1/generations/{id}.",
      ...COMPLETION_PIPELINE_DOCS,
      requestExample: { model: "llama-3.3-70b", instructions: "Be brief.", input: "Hello", max_output_tokens: 200 },
      responses: [response(200, ResponseSchema, "The response; usage.cost_details and the headers say what it cost.", COST_HEADER_NAMES)],
    },
  },
  async ({ req, body, apiKey }) => {
    assertNotForwardedBySvc(req);
    const { completion, cost } = await completeChat({ body: toChatRequest(body), apiKey, requestedMaxPriceCents: readMaxPriceHeader(req) });
    return ok(toResponse(body, completion), { ...costHeaders(cost, completion.id), ...ignoredFieldsHeader(ignoredResponsesFields(body)) });
  },
);
