import "server-only";
import type { ChatCompletionRequest } from "@/lib/router/schemas";
import { upstreamErrorCode } from "@/lib/upstream/answer";
import type { FailureCause } from "@/lib/supply/offer-health";
import type { UpstreamError } from "@/lib/upstream/client";

/**
 * Whose failure a failed forward is. The rule, written once (the docs' supplier page says it in words):
 *
 * - **explained** by the request, never held against the offer:
 *   - an answer over the response limit when the request's worst-case answer is at least the limit: forwarded
 *     max_tokens × (64 bytes of JSON-escaped text per token, plus 128 bytes per logprob entry when it asks for
 *     logprobs: 1 + top_logprobs entries a token), or when it constrains the answer by a schema (tools it lets
 *     the model call, or a json_schema response format): a schema's minItems and minLength can ask for any size,
 *     and providers differ on whether max_tokens cuts a constrained answer;
 *   - a timeout after the request was sent when its worst-case generation time is at least the timeout: the
 *     prompt at 1,000 tokens/s plus the forwarded max_tokens at 20 tokens/s (a slow but honest provider).
 * - **ours**: a timeout while waiting for a free socket in our own connection pool: the upstream never saw it.
 * - **upstream**, which no request can provoke, so it cools the offer down at once: the upstream cannot be
 *   reached (refused, unresolvable, unroutable, a forbidden address, or no connection within the timeout), it
 *   refuses the supplier's key (HTTP 401), or it is svc itself (a forwarding loop).
 * - **answer**, everything else (HTTP 5xx, 403, 404, 429…, an unusable answer, a connection broken after the
 *   request went out, an over-limit answer or a timeout the request does not explain): the supplier's failure,
 *   but one a request might provoke, so it is weighed across buyers (lib/supply/offer-health.ts).
 *
 * Upstream 400, 413 and 422 are the buyer's own errors and handled before this (upstream_rejected_request).
 */

export type ForwardFailureCause = "explained" | "ours" | FailureCause;
export type ForwardFailure = { reason: string; cause: ForwardFailureCause };

/** What the forwarded request asks of the upstream, as far as the size and time of its answer go. */
export type AnswerBounds = {
  /** The max_tokens sent upstream (the buyer's, else the model's output cap). */
  maxOutputTokens: number;
  /** The prompt's tokens as reserved (an upper bound). */
  promptTokens: number;
  logprobs: boolean;
  topLogprobs: number;
  /** The answer is constrained by a schema (callable tools or a json_schema response format). */
  schema: boolean;
};

export const TEXT_BYTES_PER_TOKEN = 64;
export const LOGPROB_ENTRY_BYTES = 128;
export const PROMPT_TOKENS_PER_SECOND = 1_000;
export const OUTPUT_TOKENS_PER_SECOND = 20;

export function answerBounds(body: ChatCompletionRequest, sizing: { maxOutputTokens: number; reservedPromptTokens: number }): AnswerBounds {
  const callableTools = (body.tools?.length ?? 0) > 0 && body.tool_choice !== "none";
  return {
    maxOutputTokens: sizing.maxOutputTokens,
    promptTokens: sizing.reservedPromptTokens,
    logprobs: body.logprobs === true || (body.top_logprobs ?? 0) > 0,
    topLogprobs: body.top_logprobs ?? 0,
    schema: callableTools || body.response_format?.type === "json_schema",
  };
}

/** The largest answer the request can ask for, in bytes (schemas aside). */
export function worstCaseAnswerBytes(b: AnswerBounds): number {
  const perToken = TEXT_BYTES_PER_TOKEN + (b.logprobs ? LOGPROB_ENTRY_BYTES * (1 + b.topLogprobs) : 0);
  return b.maxOutputTokens * perToken;
}

/** The longest an honest but slow provider may take to answer it, in ms. */
export function worstCaseAnswerMs(b: AnswerBounds): number {
  return (b.promptTokens / PROMPT_TOKENS_PER_SECOND + b.maxOutputTokens / OUTPUT_TOKENS_PER_SECOND) * 1000;
}

/** A forward that produced no usable HTTP answer. */
export function classifyUpstreamError(
  error: UpstreamError,
  bounds: AnswerBounds,
  limits: { maxResponseBytes: number; timeoutMs: number },
): ForwardFailure {
  switch (error.kind) {
    case "forbidden_address":
    case "invalid_url":
      return { reason: error.message, cause: "upstream" };
    case "network":
      return { reason: error.message, cause: error.stage === "connecting" ? "upstream" : "answer" };
    case "too_large":
      return {
        reason: error.message,
        cause: bounds.schema || worstCaseAnswerBytes(bounds) >= limits.maxResponseBytes ? "explained" : "answer",
      };
    case "timeout":
      if (error.stage === "queued") return { reason: "timeout (waiting for a connection of our own)", cause: "ours" };
      if (error.stage === "connecting") return { reason: "timeout (no connection)", cause: "upstream" };
      return { reason: "timeout", cause: worstCaseAnswerMs(bounds) >= limits.timeoutMs ? "explained" : "answer" };
  }
}

/** An HTTP answer that is not a usable completion (400, 413 and 422 excepted: those are the buyer's). */
export function classifyUpstreamStatus(status: number, json: unknown): ForwardFailure {
  if (status === 200) return { reason: "unusable answer (not an OpenAI chat completion)", cause: "answer" };
  if (upstreamErrorCode(json) === "loop_detected")
    return { reason: `HTTP ${status}: the upstream is svc itself (forwarding loop)`, cause: "upstream" };
  return { reason: `HTTP ${status}`, cause: status === 401 ? "upstream" : "answer" };
}
