import { z } from "zod";

const Message = z.strictObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  content: z.string().max(2_000_000),
  name: z.string().max(64).optional(),
});

/**
 * The OpenAI chat-completions body we accept: model and messages, plus the common sampling fields that are
 * passed through to the upstream. Streaming and n > 1 are refused (one completion is one clear).
 */
export const ChatCompletionRequest = z.strictObject({
  model: z.string().min(1).max(200),
  messages: z.array(Message).min(1, "must contain at least one message").max(1000),
  stream: z.boolean().optional(),
  max_tokens: z.number().int().min(1).optional(),
  max_completion_tokens: z.number().int().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).optional(),
  user: z.string().max(256).optional(),
  presence_penalty: z.number().min(-2).max(2).optional(),
  frequency_penalty: z.number().min(-2).max(2).optional(),
  seed: z.number().int().optional(),
  n: z.literal(1).optional(),
});

export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

/** The fields forwarded to the upstream besides model, messages and the token cap. */
export const PASSTHROUGH_FIELDS = ["temperature", "top_p", "stop", "user", "presence_penalty", "frequency_penalty", "seed"] as const;
