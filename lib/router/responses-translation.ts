/**
 * The Responses API onto chat completions and back, the one place the two shapes meet: a validated Responses
 * request becomes the chat-completion request the router's pipeline (lib/router/complete.ts) takes, and the
 * chat.completion it answers becomes a `response` object. Pure functions, no I/O: the pipeline's reservation,
 * metering, clear and headers are the chat path's own, and so are the billed usage and its cost (copied field by
 * field under the Responses names, never recomputed).
 *
 * Requests: `instructions` is a leading system message; input items are messages in order, consecutive
 * function_call items one assistant turn with tool_calls (joined to the assistant message just before them, as one
 * chat turn), each function_call_output a tool message; reasoning items are dropped (chat upstreams take none);
 * function tools, tool_choice, text.format, max_output_tokens (max_completion_tokens: it covers the reasoning too),
 * reasoning.effort and reasoning.max_tokens (the reasoning budget) map to their chat fields.
 * Answers: the visible reasoning, then the message (output_text or refusal), then one function_call item per tool
 * call; finish_reason `length` is status incomplete (max_output_tokens), `content_filter` incomplete (content_filter).
 */
import "server-only";
import type { ChatCompletionRequest, ChatCompletionResponse } from "@/lib/router/schemas";
import type { ResponseObject, ResponseOutputItem, ResponsesInputItem, ResponsesRequest } from "@/lib/router/responses-schemas";
import { responseIdOf } from "@/lib/wire";

type ChatMessage = ChatCompletionRequest["messages"][number];
type AssistantMessage = Extract<ChatMessage, { role: "assistant" }>;
type TextParts = { type: "text"; text: string }[];

// ─── request ─────────────────────────────────────────────────────────────────

export function toChatRequest(req: ResponsesRequest): ChatCompletionRequest {
  const messages: ChatMessage[] = [];
  if (req.instructions != null) messages.push({ role: "system", content: req.instructions });
  if (typeof req.input === "string") messages.push({ role: "user", content: req.input });
  else messages.push(...toChatMessages(req.input));

  const tools = req.tools ?? [];
  const format = req.text?.format;
  const chat: ChatCompletionRequest = { model: req.model, messages };
  if (tools.length > 0) {
    chat.tools = tools.map((t) => ({
      type: "function" as const,
      function: {
        name: t.name,
        ...(t.description != null && { description: t.description }),
        ...(t.parameters != null && { parameters: t.parameters }),
        ...(t.strict != null && { strict: t.strict }),
      },
    }));
    if (req.tool_choice != null) {
      chat.tool_choice =
        typeof req.tool_choice === "string" ? req.tool_choice : { type: "function", function: { name: req.tool_choice.name } };
    }
    if (req.parallel_tool_calls != null) chat.parallel_tool_calls = req.parallel_tool_calls;
  }
  // Without tools a tool choice says nothing (clients send parallel_tool_calls and tool_choice: auto by default).
  if (format && format.type !== "text") {
    chat.response_format =
      format.type === "json_object"
        ? { type: "json_object" }
        : {
            type: "json_schema",
            json_schema: {
              name: format.name,
              schema: format.schema,
              ...(format.description !== undefined && { description: format.description }),
              ...(format.strict != null && { strict: format.strict }),
            },
          };
  }
  if (req.max_output_tokens != null) chat.max_completion_tokens = req.max_output_tokens;
  if (req.temperature != null) chat.temperature = req.temperature;
  if (req.top_p != null) chat.top_p = req.top_p;
  if (req.top_k != null) chat.top_k = req.top_k;
  if (req.min_p != null) chat.min_p = req.min_p;
  if (req.repetition_penalty != null) chat.repetition_penalty = req.repetition_penalty;
  if (req.reasoning?.effort != null) chat.reasoning_effort = req.reasoning.effort;
  if (req.reasoning?.max_tokens != null) chat.reasoning = { max_tokens: req.reasoning.max_tokens };
  if (req.metadata != null) chat.metadata = req.metadata;
  if (req.user != null) chat.user = req.user;
  if (req.provider != null) chat.provider = req.provider;
  return chat;
}

/** Input items as chat messages, in order; an assistant turn's text and its function calls become one message. */
export function toChatMessages(items: readonly ResponsesInputItem[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  // The assistant message the next function_call joins, while nothing else has come after it.
  let turn: AssistantMessage | null = null;
  for (const item of items) {
    if (item.type === "reasoning") continue;
    if (item.type === "function_call") {
      const call = { id: item.call_id, type: "function" as const, function: { name: item.name, arguments: item.arguments } };
      if (turn) (turn.tool_calls ??= []).push(call);
      else {
        turn = { role: "assistant", content: null, tool_calls: [call] };
        messages.push(turn);
      }
      continue;
    }
    if (item.type === "function_call_output") {
      turn = null;
      const content = typeof item.output === "string" ? item.output : textParts(item.output);
      messages.push({ role: "tool", tool_call_id: item.call_id, content });
      continue;
    }
    turn = null;
    switch (item.role) {
      case "user":
        messages.push({
          role: "user",
          content:
            typeof item.content === "string"
              ? item.content
              : item.content.map((part) =>
                  part.type === "input_text"
                    ? { type: "text" as const, text: part.text }
                    : {
                        type: "image_url" as const,
                        image_url: { url: part.image_url, ...(part.detail !== undefined && { detail: part.detail }) },
                      },
                ),
        });
        break;
      case "system":
      case "developer":
        messages.push({ role: item.role, content: typeof item.content === "string" ? item.content : textParts(item.content) });
        break;
      case "assistant": {
        turn = assistantMessage(item.content);
        messages.push(turn);
        break;
      }
    }
  }
  return messages;
}

function textParts(parts: readonly { text: string }[]): TextParts {
  return parts.map((p) => ({ type: "text", text: p.text }));
}

/** An earlier answer sent back: its text parts joined, a refusal kept as the message's refusal. */
function assistantMessage(content: string | readonly ({ type: "output_text"; text: string } | { type: "refusal"; refusal: string })[]) {
  if (typeof content === "string") return { role: "assistant", content } satisfies AssistantMessage as AssistantMessage;
  const text = content.flatMap((p) => (p.type === "output_text" ? [p.text] : [])).join("");
  const refusal = content.flatMap((p) => (p.type === "refusal" ? [p.refusal] : [])).join("");
  // Always a string: an upstream may refuse an assistant message with neither content nor tool calls.
  const message: AssistantMessage = { role: "assistant", content: text };
  if (refusal !== "") message.refusal = refusal;
  return message;
}

// ─── answer ──────────────────────────────────────────────────────────────────

/** The chat completion the pipeline answered, as the `response` object of the request it came from. */
export function toResponse(req: ResponsesRequest, completion: ChatCompletionResponse): ResponseObject {
  const choice = completion.choices[0];
  const { message } = choice;
  const random = responseIdOf(completion.id).slice("resp_".length);
  const output: ResponseOutputItem[] = [];
  if (message.reasoning_content !== undefined) {
    output.push({
      type: "reasoning",
      id: `rs_${random}`,
      summary: [],
      content: [{ type: "reasoning_text", text: message.reasoning_content }],
    });
  }
  const hasRefusal = typeof message.refusal === "string" && message.refusal !== "";
  if (hasRefusal || message.content !== null) {
    const content: Extract<ResponseOutputItem, { type: "message" }>["content"] = [];
    if (message.content !== null && (message.content !== "" || !hasRefusal))
      content.push({ type: "output_text", text: message.content, annotations: [] });
    if (hasRefusal) content.push({ type: "refusal", refusal: message.refusal! });
    // A reply that is only tool calls has content "" (the upstream's null or empty text): no message item then.
    if (!(message.tool_calls?.length && content.length === 1 && message.content === "" && !hasRefusal)) {
      output.push({ type: "message", id: `msg_${random}`, status: "completed", role: "assistant", content });
    }
  }
  for (const [i, call] of (message.tool_calls ?? []).entries()) {
    output.push({
      type: "function_call",
      id: `fc_${random}_${i}`,
      status: "completed",
      call_id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    });
  }

  const incomplete =
    choice.finish_reason === "length" ? "max_output_tokens" : choice.finish_reason === "content_filter" ? "content_filter" : null;
  const { usage } = completion;
  return {
    ...responseEnvelope(req, completion.id, completion.created, completion.model),
    status: incomplete === null ? "completed" : "incomplete",
    incomplete_details: incomplete === null ? null : { reason: incomplete },
    output,
    usage: {
      input_tokens: usage.prompt_tokens,
      input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
      output_tokens: usage.completion_tokens,
      output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
      total_tokens: usage.total_tokens,
      cost: usage.cost,
      cost_details: usage.cost_details,
    },
  };
}

/**
 * Every field of a response but its status, output and usage: what the request asked for, under the response's id.
 * A stream's first events (lib/router/responses-stream.ts) send it before there is an answer.
 */
export function responseEnvelope(req: ResponsesRequest, completionId: string, created: number, model: string) {
  return {
    id: responseIdOf(completionId),
    object: "response" as const,
    created_at: created,
    error: null,
    model,
    instructions: req.instructions ?? null,
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    tool_choice: req.tool_choice ?? "auto",
    tools: req.tools ?? [],
    text: { format: req.text?.format ?? { type: "text" } },
    reasoning: { effort: req.reasoning?.effort ?? null, summary: req.reasoning?.summary ?? null },
    temperature: req.temperature ?? null,
    top_p: req.top_p ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    metadata: req.metadata ?? {},
    user: req.user ?? null,
    previous_response_id: null,
    background: false as const,
    truncation: "disabled" as const,
    store: false as const,
  };
}
