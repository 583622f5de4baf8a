import "server-only";
import { z } from "zod";
import { errorBody } from "@/lib/http/errors";
import { response } from "@/lib/http/openapi/operation";
import { ok } from "@/lib/http/responses";
import { route, type ApiVersion } from "@/lib/http/route";
import type { RouteHandler } from "@/lib/http/route-types";
import {
  assertNotForwardedBySvc,
  COMPLETION_PIPELINE_DOCS,
  COST_HEADER_NAMES,
  costHeaders,
  ignoredFieldsHeader,
  readMaxPriceHeader,
} from "@/lib/http/svc-headers";
import { completeChat } from "@/lib/router/complete";
import { streamOptionsWithoutStream } from "@/lib/router/refusals";
import { ignoredResponsesFields, ResponseSchema, ResponsesRequest } from "@/lib/router/responses-schemas";
import { toChatRequest, toResponse } from "@/lib/router/responses-translation";
import { ChatCompletionRequest, ChatCompletionSchema, ignoredChatFields } from "@/lib/router/schemas";
import { streamCompletion } from "@/lib/router/stream";

/**
 * The two inference routes, one implementation mounted in each API version: /v1 is the service spec's contract
 * exactly (`stream: true` is 400 stream_not_supported), /v2 is the same route that also streams. Without `stream: true`
 * a v2 request is answered exactly as v1 answers it; with it, lib/router/stream.ts answers (text/event-stream).
 */

/** v2's requests: v1's, with `stream` allowed (and OpenAI's stream_options for the Responses API). */
const ChatCompletionRequestV2 = ChatCompletionRequest.safeExtend({
  stream: z.boolean().nullish().describe("true: the answer streams as server-sent events (chat.completion.chunk, then [DONE])"),
  stream_options: z
    .strictObject({ include_usage: z.boolean().optional() })
    .nullish()
    .describe(
      "Accepted with stream: true; the last chunk carries the usage (its cost, the balance after the clear) whether or not include_usage is set, as on OpenRouter",
    ),
});
const ResponsesRequestV2 = ResponsesRequest.safeExtend({
  stream: z.boolean().nullish().describe("true: the answer streams as the Responses API's events (response.created … response.completed)"),
  stream_options: z.strictObject({ include_obfuscation: z.boolean().optional() }).nullish().describe("Accepted; svc sends no obfuscation"),
});

const CHAT_V1_DESCRIPTION =
  "OpenAI-compatible: tools, tool_choice, content parts (text, image_url), response_format (json_object, json_schema), logprobs and the sampling fields. Reserves the worst case (prompt plus max_tokens, or the model's output cap, at the chosen offer's price; when you ask for reasoning on a model that bills it, plus the reasoning budget: reasoning.max_tokens, else a default by effort, within the model's cap; max_completion_tokens, when sent, is the whole) on the cheapest eligible offer at or below your max price that serves the features the request uses, forwards once, then charges the usage checked against svc's own count and releases the rest. `usage.cost` (USD, a JSON number, as OpenRouter's clients read it) and `usage.cost_details` (exact decimal strings: charge, supplier share, platform fee, burn, the offer's price, the tokens billed beside the upstream's claim, reasoning tokens included; hidden reasoning is billed at most up to the reasoning budget and what the answer makes plausible) are the clear's own journal entry, to the micro-unit. On an offer that caches prompts, `usage.prompt_tokens_details.cached_tokens` are the prompt tokens billed at the model's cache-read price: the larger of the upstream's report and what svc itself sent that offer within its declared retention (the reservation still holds every prompt token at the input price). `X-Svc-Generation-Id` (the completion's id) finds the record later at GET /v1/generations/{id}. `stream: true` is refused (stream_not_supported, ahead of any other problem). The optional `provider` object (OpenRouter's names: sort by price, latency or throughput; only/ignore offers or suppliers; quantizations; data_collection; max_price per 1M tokens; soft preferred_max_latency and preferred_min_throughput; cache_affinity, true by default: prefer the offer holding this prompt's prefix while its effective price is the best; require_parameters and allow_fallbacks accepted with no effect) chooses among the offers, merged field by field over the key's and the account's provider_preferences; when it leaves no offer the 503 names the preference (no_offer_matches_provider_*). OpenRouter's sampling fields top_k, min_p and repetition_penalty are forwarded as sent; the fields OpenRouter's and OpenAI's clients send that svc has no use for (models, route, transforms, top_a, usage, service_tier, prompt_cache_key, safety_identifier, verbosity, store, prediction, modalities [\"text\"]) are accepted, each described below with why, and the answer's X-Svc-Ignored-Fields names those the request sent.";

const RESPONSES_V1_DESCRIPTION =
  "OpenAI's Responses API for agents' frameworks, served as one chat completion: the same key checks, rate limits, max price, feature routing, reservation, metering and clear as POST /v1/chat/completions, and one clear per response. `input` is a string or items (`message` with input_text and input_image parts, `function_call`, `function_call_output`; `reasoning` items are accepted and not forwarded); `instructions`; `tools` of type function (with `strict`), `tool_choice`, `parallel_tool_calls`; `text.format` (text, json_object, json_schema); `max_output_tokens`; `temperature`; `top_p`; `top_k`, `min_p`, `repetition_penalty` (forwarded); `reasoning.effort` and `reasoning.max_tokens` (the reasoning budget, as on chat completions); `metadata`; `user`. svc stores nothing: `store: true` is accepted and the answer says `store: false`; `previous_response_id`, `conversation`, `background`, `prompt` and built-in tools (web search, file search, computer use, ...) are refused with a 400 naming the field, before anything is reserved; `stream: true` is stream_not_supported. OpenRouter's and OpenAI's fields svc has no use for (models, route, transforms, top_a, usage, service_tier, prompt_cache_key, safety_identifier, include, truncation auto, top_logprobs, max_tool_calls, text.verbosity) are accepted and named in X-Svc-Ignored-Fields. The answer's `status` is `incomplete` (with `incomplete_details.reason` max_output_tokens) when the model stopped at the output cap. `provider` chooses among the offers as on chat completions. `usage.cost` and `usage.cost_details` are the clear's own journal entry, as on chat completions; `X-Svc-Generation-Id` is the generation's id (chatcmpl-… with the response id's random part) for GET /v1/generations/{id}.";

const STREAMING =
  " With `stream: true` the answer is a text/event-stream sent as the upstream generates it: the same checks and reservation first (anything refused is refused with its usual JSON error, before the first byte; 429 beyond the open streams allowed per key and per account), then the headers at once (X-Svc-Generation-Id, X-Svc-Price-Cents, X-Svc-Max-Cents, X-Svc-Reserved, X-Svc-Max-Burn-Diem) and keep-alive comments while the upstream is silent. One clear, however the stream ends (the generation record's `end`): completed bills the upstream's final usage checked against svc's count; a client that hangs up pays the prompt and what had arrived, by svc's count (the upstream call is closed); an upstream that fails mid-stream gives an error event and bills what arrived by svc's count (nothing arrived: nothing billed). See /docs/streaming.";

const STREAM_HEADERS = ["SvcGenerationId", "SvcPriceCents", "SvcMaxCents", "SvcReserved", "SvcMaxBurnDiem"] as const;

export function chatCompletionsRoute(version: ApiVersion): RouteHandler {
  const streams = version === "v2";
  return route(
    {
      auth: "bearer",
      body: streams ? ChatCompletionRequestV2 : ChatCompletionRequest,
      rateLimit: true,
      docs: {
        operationId: streams ? "createChatCompletionV2" : "createChatCompletion",
        tag: "Inference",
        summary: streams ? "Create a chat completion, streamed or not" : "Create a chat completion",
        description: streams
          ? CHAT_V1_DESCRIPTION.replace(
              " `stream: true` is refused (stream_not_supported, ahead of any other problem).",
              " `stream_options` without `stream: true` is a 400, as on OpenAI.",
            ) +
            STREAMING +
            ' The stream is OpenAI\'s: `chat.completion.chunk` events (role, content, reasoning_content, tool-call deltas with index/id/name/arguments, finish_reason), then a last chunk with no choices and the usage (cost, cost_details, balance_remaining; sent with or without stream_options.include_usage, as OpenRouter does), then `data: [DONE]`; a failure is `data: {"error": …}` with no [DONE].'
          : CHAT_V1_DESCRIPTION,
        ...COMPLETION_PIPELINE_DOCS,
        requestExample: {
          model: "llama-3.3-70b",
          messages: [{ role: "user", content: "Hello" }],
          max_tokens: 200,
          temperature: 0.7,
          ...(streams && { stream: true }),
        },
        responses: [
          {
            ...response(200, ChatCompletionSchema, "The completion; usage.cost_details and the headers say what it cost.", [
              ...COST_HEADER_NAMES,
              ...(streams ? STREAM_HEADERS : []),
            ]),
            ...(streams && { eventStream: "stream: true: chat.completion.chunk events, then data: [DONE]" }),
          },
        ],
      },
    },
    async ({ req, body, apiKey }) => {
      assertNotForwardedBySvc(req);
      const requestedMaxPriceCents = readMaxPriceHeader(req);
      if (streams && body.stream) {
        return streamCompletion({
          body,
          apiKey,
          requestedMaxPriceCents,
          format: { kind: "chat" },
          renderError: errorBody,
          headers: ignoredFieldsHeader(ignoredChatFields(body)),
        });
      }
      if (streams && body.stream_options != null) throw streamOptionsWithoutStream();
      const { completion, cost } = await completeChat({ body, apiKey, requestedMaxPriceCents });
      return ok(completion, { ...costHeaders(cost, completion.id), ...ignoredFieldsHeader(ignoredChatFields(body)) });
    },
  );
}

export function responsesRoute(version: ApiVersion): RouteHandler {
  const streams = version === "v2";
  return route(
    {
      auth: "bearer",
      body: streams ? ResponsesRequestV2 : ResponsesRequest,
      rateLimit: true,
      docs: {
        operationId: streams ? "createResponseV2" : "createResponse",
        tag: "Inference",
        summary: streams
          ? "Create a response (OpenAI Responses API, stateless), streamed or not"
          : "Create a response (OpenAI Responses API, stateless)",
        description: streams
          ? RESPONSES_V1_DESCRIPTION.replace("; `stream: true` is stream_not_supported", "") +
            STREAMING +
            " The events are OpenAI's (each with `event:` and `sequence_number`): response.created, response.in_progress, per item response.output_item.added before its deltas (output_text, refusal, reasoning_text, function_call_arguments), their .done events and response.output_item.done, then exactly one of response.completed, response.incomplete or response.failed, whose response carries the usage and its cost."
          : RESPONSES_V1_DESCRIPTION,
        ...COMPLETION_PIPELINE_DOCS,
        requestExample: {
          model: "llama-3.3-70b",
          instructions: "Be brief.",
          input: "Hello",
          max_output_tokens: 200,
          ...(streams && { stream: true }),
        },
        responses: [
          {
            ...response(200, ResponseSchema, "The response; usage.cost_details and the headers say what it cost.", [
              ...COST_HEADER_NAMES,
              ...(streams ? STREAM_HEADERS : []),
            ]),
            ...(streams && { eventStream: "stream: true: the Responses API's events, response.created … response.completed" }),
          },
        ],
      },
    },
    async ({ req, body, apiKey }) => {
      assertNotForwardedBySvc(req);
      const requestedMaxPriceCents = readMaxPriceHeader(req);
      const chat = toChatRequest(body);
      if (streams && body.stream) {
        return streamCompletion({
          body: chat,
          apiKey,
          requestedMaxPriceCents,
          surface: "responses",
          format: { kind: "responses", request: body },
          renderError: errorBody,
          headers: ignoredFieldsHeader(ignoredResponsesFields(body)),
        });
      }
      const { completion, cost } = await completeChat({ body: chat, apiKey, requestedMaxPriceCents, surface: "responses" });
      return ok(toResponse(body, completion), {
        ...costHeaders(cost, completion.id),
        ...ignoredFieldsHeader(ignoredResponsesFields(body)),
      });
    },
  );
}
