/** What POST /v1/chat/completions answers: OpenAI's chat.completion object, with our own id and the buyer's model. */
import { z } from "zod";
import { component } from "@/lib/wire";

export const ChatCompletionSchema = component(
  "ChatCompletion",
  z.object({
    id: z.string().describe("chatcmpl-…"),
    object: z.literal("chat.completion"),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({ role: z.string(), content: z.string() }),
        finish_reason: z.string(),
      }),
    ),
    usage: z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() }),
  }),
);

export type ChatCompletionResponse = z.output<typeof ChatCompletionSchema>;
