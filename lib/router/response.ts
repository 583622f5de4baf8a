/** What POST /v1/chat/completions answers: OpenAI's chat.completion object, with our own id and the buyer's model. */
import { z } from "zod";
import { component } from "@/lib/wire";

const ToolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string().describe("JSON text, as the model wrote it") }),
});

export const ChatCompletionSchema = component(
  "ChatCompletion",
  z.object({
    id: z.string().describe("chatcmpl-… (ours, not the upstream's)"),
    object: z.literal("chat.completion"),
    created: z.number().int(),
    model: z.string().describe("The model as you named it"),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({
          role: z.literal("assistant"),
          content: z.string().nullable().describe("null when the answer is only tool calls or a refusal"),
          refusal: z.string().nullable().optional(),
          tool_calls: z.array(ToolCallSchema).optional(),
          reasoning_content: z.string().optional().describe("The model's visible reasoning, when the upstream returns it (billed as output)"),
        }),
        finish_reason: z.enum(["stop", "length", "tool_calls", "content_filter"]),
        logprobs: z.record(z.string(), z.unknown()).nullable().describe("As the upstream produced them, when requested"),
      }),
    ),
    usage: z
      .object({
        prompt_tokens: z.number().int(),
        completion_tokens: z.number().int(),
        total_tokens: z.number().int(),
        prompt_tokens_details: z.object({ cached_tokens: z.number().int() }).optional(),
        completion_tokens_details: z.object({ reasoning_tokens: z.number().int() }).optional(),
      })
      .describe("What was billed: the upstream's claim when within the tolerance of our own count, else our count"),
    system_fingerprint: z.string().optional(),
  }),
);

export type ChatCompletionResponse = z.output<typeof ChatCompletionSchema>;
