/**
 * The Responses API ↔ chat completions translation (lib/router/responses-translation.ts) and the Responses request's
 * own validation: what a client's items become upstream, what the upstream's answer becomes for the client, and the
 * fields svc refuses, each named in the 400.
 */
import { describe, expect, it } from "vitest";
import { parseInput } from "@/lib/http/body";
import { ResponsesRequest } from "@/lib/router/responses-schemas";
import { toChatRequest, toResponse } from "@/lib/router/responses-translation";
import { responseIdOf } from "@/lib/wire";
import { ChatCompletionRequest, type ChatCompletionResponse } from "@/lib/router/schemas";

const parse = (body: unknown) => parseInput(ResponsesRequest, body, "body");

const weather = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };

describe("a Responses request as a chat request", () => {
  it("puts instructions first as a system message and a string input as the user's message", () => {
    const chat = toChatRequest(parse({ model: "m", instructions: "Be brief.", input: "Hello", max_output_tokens: 50, temperature: 0.2 }));
    expect(chat).toEqual({
      model: "m",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello" },
      ],
      max_completion_tokens: 50,
      temperature: 0.2,
    });
  });

  it("maps items in order: parts and images, an assistant turn with its calls, each call's output, and drops reasoning", () => {
    const chat = toChatRequest(
      parse({
        model: "m",
        input: [
          { role: "developer", content: "Use tools." },
          {
            type: "message",
            role: "user",
            content: [
              { type: "input_text", text: "What is this?" },
              { type: "input_image", image_url: "https://example.com/cat.png", detail: "low" },
            ],
          },
          { type: "reasoning", id: "rs_1", summary: [] },
          {
            type: "message",
            id: "msg_1",
            status: "completed",
            role: "assistant",
            content: [{ type: "output_text", text: "Let me look.", annotations: [] }],
          },
          { type: "function_call", id: "fc_1", call_id: "call_a", name: "look", arguments: '{"x":1}' },
          { type: "function_call", call_id: "call_b", name: "look", arguments: '{"x":2}' },
          { type: "function_call_output", call_id: "call_a", output: "a cat" },
          { type: "function_call_output", call_id: "call_b", output: [{ type: "input_text", text: "a dog" }] },
          { type: "function_call", call_id: "call_c", name: "look", arguments: "{}" },
        ],
      }),
    );
    expect(chat.messages).toEqual([
      { role: "developer", content: "Use tools." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
        ],
      },
      {
        role: "assistant",
        content: "Let me look.",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "look", arguments: '{"x":1}' } },
          { id: "call_b", type: "function", function: { name: "look", arguments: '{"x":2}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "a cat" },
      { role: "tool", tool_call_id: "call_b", content: [{ type: "text", text: "a dog" }] },
      { role: "assistant", content: null, tool_calls: [{ id: "call_c", type: "function", function: { name: "look", arguments: "{}" } }] },
    ]);
    // What the pipeline receives is a chat request its own schema accepts.
    expect(ChatCompletionRequest.safeParse(chat).success).toBe(true);
  });

  it("maps function tools, tool_choice, text.format and reasoning.effort to their chat fields", () => {
    const chat = toChatRequest(
      parse({
        model: "m",
        input: "Weather?",
        tools: [{ type: "function", name: "get_weather", description: "Weather", parameters: weather, strict: true }],
        tool_choice: { type: "function", name: "get_weather" },
        parallel_tool_calls: false,
        text: { format: { type: "json_schema", name: "w", schema: weather, strict: true } },
        reasoning: { effort: "low" },
        metadata: { run: "1" },
        user: "u1",
      }),
    );
    expect(chat).toMatchObject({
      tools: [{ type: "function", function: { name: "get_weather", description: "Weather", parameters: weather, strict: true } }],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
      response_format: { type: "json_schema", json_schema: { name: "w", schema: weather, strict: true } },
      reasoning_effort: "low",
      metadata: { run: "1" },
      user: "u1",
    });
    // The reasoning budget (OpenRouter's reasoning.max_tokens) becomes chat's, beside max_output_tokens (the whole).
    expect(
      toChatRequest(parse({ model: "m", input: "x", max_output_tokens: 900, reasoning: { effort: "high", max_tokens: 600 } })),
    ).toMatchObject({ max_completion_tokens: 900, reasoning_effort: "high", reasoning: { max_tokens: 600 } });
    expect(toChatRequest(parse({ model: "m", input: "x", text: { format: { type: "json_object" } } })).response_format).toEqual({
      type: "json_object",
    });
    expect(toChatRequest(parse({ model: "m", input: "x", text: { format: { type: "text" } } })).response_format).toBeUndefined();
  });

  it("drops tool_choice and parallel_tool_calls without tools (clients send their defaults)", () => {
    const chat = toChatRequest(parse({ model: "m", input: "x", tool_choice: "auto", parallel_tool_calls: true, store: true }));
    expect(chat).toEqual({ model: "m", messages: [{ role: "user", content: "x" }] });
  });
});

describe("the Responses request's refusals", () => {
  it.each([
    ["previous_response_id", { previous_response_id: "resp_123" }, "previous_response_id"],
    ["background", { background: true }, "background"],
    ["conversation", { conversation: "conv_1" }, "conversation"],
    ["a built-in tool", { tools: [{ type: "web_search" }] }, "tools.0.type"],
    ["a built-in tool choice", { tools: [{ type: "function", name: "f" }], tool_choice: { type: "file_search" } }, "tool_choice.type"],
  ])("refuses %s with a 400 naming the field", (_, fields, param) => {
    expect(() => parse({ model: "m", input: "x", ...fields })).toThrow(
      expect.objectContaining({ code: "invalid_request", details: { param } }),
    );
  });

  it("refuses stream: true as stream_not_supported ahead of any other problem", () => {
    expect(() => parse({ model: "m", input: "x", stream: true, previous_response_id: "resp_1", tools: [{ type: "web_search" }] })).toThrow(
      expect.objectContaining({ code: "stream_not_supported", details: { param: "stream" } }),
    );
  });

  it("names a malformed function tool's field, and a tool_choice naming no tool", () => {
    expect(() => parse({ model: "m", input: "x", tools: [{ type: "function", name: "f", color: "red" }] })).toThrow(
      expect.objectContaining({ code: "unknown_field" }),
    );
    expect(() =>
      parse({ model: "m", input: "x", tools: [{ type: "function", name: "f" }], tool_choice: { type: "function", name: "g" } }),
    ).toThrow(expect.objectContaining({ code: "invalid_request", details: { param: "tool_choice.name" } }));
  });

  it("names a malformed item's own field, and refuses an item type svc cannot serve", () => {
    expect(() => parse({ model: "m", input: [{ role: "user", content: [{ type: "input_image", file_id: "file_1" }] }] })).toThrow(
      expect.objectContaining({ code: "invalid_request", details: { param: "input.0.content" } }),
    );
    expect(() => parse({ model: "m", input: [{ type: "function_call", call_id: "c", name: "f" }] })).toThrow(
      expect.objectContaining({ code: "invalid_request", details: { param: "input.0.arguments" } }),
    );
    expect(() => parse({ model: "m", input: [{ type: "item_reference", id: "msg_1" }] })).toThrow(
      expect.objectContaining({ code: "invalid_request", details: { param: "input.0.type" } }),
    );
  });

  it("refuses tool_choice: required without tools (auto and none are dropped)", () => {
    expect(() => parse({ model: "m", input: "x", tool_choice: "required" })).toThrow(
      expect.objectContaining({ code: "invalid_request", details: { param: "tool_choice" } }),
    );
  });

  it("accepts background: false and store: true", () => {
    expect(parse({ model: "m", input: "x", background: false, store: true })).toMatchObject({ store: true });
  });
});

const cost = {
  cost: 0.000123,
  cost_details: {
    charge: "0.000123",
    supplier_share: "0.000100",
    platform_fee: "0.000023",
    burn: "0.000137",
    price_cents_per_diem: 90,
    billed_prompt_tokens: 10,
    billed_completion_tokens: 5,
    claimed_prompt_tokens: 10,
    claimed_completion_tokens: 5,
    billed_reasoning_tokens: null,
    claimed_reasoning_tokens: null,
    counted_prompt_tokens: 10,
    counted_completion_tokens: 5,
    reasoning_tokens_bound: null,
    billed_cached_tokens: null,
    claimed_cached_tokens: null,
    usage_estimated: false,
    usage_disputed: false,
  },
};

function completion(
  message: ChatCompletionResponse["choices"][0]["message"],
  finish: ChatCompletionResponse["choices"][0]["finish_reason"],
) {
  return {
    id: "chatcmpl-abc123",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "m",
    choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
    usage: {
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
      prompt_tokens_details: { cached_tokens: 2 },
      completion_tokens_details: { reasoning_tokens: 1 },
      ...cost,
    },
  } satisfies ChatCompletionResponse;
}

describe("a chat completion as a response", () => {
  const req = parse({ model: "m", input: "Hi", store: true });

  it("answers the text as a message's output_text, completed, with the usage and the cost under the Responses names", () => {
    const response = toResponse(req, completion({ role: "assistant", content: "Hello!" }, "stop"));
    expect(response).toMatchObject({
      id: "resp_abc123",
      object: "response",
      created_at: 1_700_000_000,
      status: "completed",
      incomplete_details: null,
      model: "m",
      store: false,
      output: [
        {
          type: "message",
          id: "msg_abc123",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Hello!", annotations: [] }],
        },
      ],
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 2 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 1 },
        total_tokens: 15,
        ...cost,
      },
    });
    expect(responseIdOf("chatcmpl-abc123")).toBe("resp_abc123");
  });

  it("answers tool calls as function_call items with their call ids", () => {
    const calls = [
      { id: "call_1", type: "function" as const, function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      { id: "call_2", type: "function" as const, function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
    ];
    const response = toResponse(req, completion({ role: "assistant", content: null, tool_calls: calls }, "tool_calls"));
    expect(response.status).toBe("completed");
    expect(response.output).toEqual([
      {
        type: "function_call",
        id: "fc_abc123_0",
        status: "completed",
        call_id: "call_1",
        name: "get_weather",
        arguments: '{"city":"Paris"}',
      },
      {
        type: "function_call",
        id: "fc_abc123_1",
        status: "completed",
        call_id: "call_2",
        name: "get_weather",
        arguments: '{"city":"Rome"}',
      },
    ]);
  });

  it("is incomplete at the output cap (max_output_tokens) and at the upstream's filter (content_filter)", () => {
    expect(toResponse(req, completion({ role: "assistant", content: "Hel" }, "length"))).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
    });
    expect(toResponse(req, completion({ role: "assistant", content: "" }, "content_filter"))).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "content_filter" },
    });
  });

  it("puts visible reasoning first as a reasoning item, and a refusal as the message's refusal part", () => {
    const response = toResponse(
      req,
      completion({ role: "assistant", content: null, refusal: "I can't.", reasoning_content: "hmm" }, "stop"),
    );
    expect(response.output).toEqual([
      { type: "reasoning", id: "rs_abc123", summary: [], content: [{ type: "reasoning_text", text: "hmm" }] },
      { type: "message", id: "msg_abc123", status: "completed", role: "assistant", content: [{ type: "refusal", refusal: "I can't." }] },
    ]);
  });
});
