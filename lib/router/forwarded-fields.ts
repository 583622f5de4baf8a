import "server-only";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { reasoningEffortOf } from "@/lib/upstream/metering";
import type { ChatCompletionRequest } from "@/lib/router/schemas";

/**
 * What the upstream gets of the buyer's request: the messages and the fields below as sent (nulls dropped). The
 * model, the token cap and `stream` are ours (the envelope lib/router/complete.ts adds when forwarding); metadata,
 * stream_options and n are accepted and never forwarded, nor are the fields svc accepts and ignores (IGNORED_FIELDS
 * in lib/router/schemas.ts: the answer's X-Svc-Ignored-Fields names those a request sent). The effort the request asks for, by reasoning_effort or by
 * OpenRouter's `reasoning` object, goes as reasoning_effort (the field OpenAI-compatible servers read); the object itself
 * is svc's (its budget bounds what is billed, lib/upstream/metering.ts) and is not forwarded.
 */

/** Fields forwarded to the upstream as sent (when not null), besides model, messages and the token cap. */
export const PASSTHROUGH_FIELDS = [
  "temperature",
  "top_p",
  "stop",
  "user",
  "presence_penalty",
  "frequency_penalty",
  "seed",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "response_format",
  "logprobs",
  "top_logprobs",
  "logit_bias",
  // OpenRouter's sampling fields that vLLM, SGLang, llama.cpp and Venice read too (SAMPLING_FIELDS).
  "top_k",
  "min_p",
  "repetition_penalty",
] as const satisfies readonly (keyof ChatCompletionRequest)[];

/**
 * The buyer's fields as the upstream gets them (nulls dropped), serialized once. They never exceed the body limit
 * we validated against (only numbers like 1e20 can re-encode longer); the envelope added when forwarding (the
 * upstream's model name, max_tokens, stream) replaces the buyer's own model and is at most a few hundred bytes.
 */
export function serializeForwardedFields(body: ChatCompletionRequest): string {
  const fields: Record<string, unknown> = { messages: body.messages };
  for (const field of PASSTHROUGH_FIELDS) if (body[field] != null) fields[field] = body[field];
  const effort = reasoningEffortOf(body);
  if (effort !== null) fields.reasoning_effort = effort;
  const json = JSON.stringify(fields);
  if (Buffer.byteLength(json) > env.MAX_BODY_BYTES) {
    // Only numbers written as e.g. 1e20 inside schemas re-encode longer than they were sent.
    throw new AppError(
      "payload_too_large",
      `The request re-encodes to more than ${env.MAX_BODY_BYTES} bytes; nothing is forwarded larger than the body limit. Write numbers without exponents.`,
      { details: { limit_bytes: env.MAX_BODY_BYTES } },
    );
  }
  return json;
}
