import "server-only";

/**
 * The features a model may or may not serve: function tools, JSON-schema structured outputs, image inputs.
 * A model in the catalog says what it can do; an offer serves what its model can do, less what its upstream
 * said it lacks when the offer was posted. The router routes a request only to offers serving all it uses.
 */
export const FEATURES = ["tools", "json_schema", "vision"] as const;
export type Feature = (typeof FEATURES)[number];
export type Features = Record<Feature, boolean>;

export const NO_FEATURES: Features = { tools: false, json_schema: false, vision: false };

/** What the request uses: tool definitions, a json_schema response format, image parts. */
export function requiredFeatures(body: {
  tools?: readonly unknown[] | null;
  response_format?: { type: string } | null;
  messages: readonly { role: string; content?: unknown }[];
}): Features {
  return {
    tools: (body.tools?.length ?? 0) > 0,
    json_schema: body.response_format?.type === "json_schema",
    vision: body.messages.some(
      (m) => m.role === "user" && Array.isArray(m.content) && m.content.some((p: { type?: unknown }) => p.type === "image_url"),
    ),
  };
}

/** The features recorded on a catalog model or an offer's model row. */
export function featuresOf(model: { supportsTools: boolean; supportsJsonSchema: boolean; supportsVision: boolean }): Features {
  return { tools: model.supportsTools, json_schema: model.supportsJsonSchema, vision: model.supportsVision };
}

/** The request parameters every model accepts here (forwarded as sent; `provider` is svc's own: it chooses the offer). */
const BASE_PARAMETERS = [
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "top_k",
  "min_p",
  "repetition_penalty",
  "stop",
  "seed",
  "presence_penalty",
  "frequency_penalty",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "reasoning_effort",
  "reasoning",
  "response_format",
  "user",
  "provider",
];

/** OpenRouter-style `supported_parameters` of a model serving `features`. */
export function supportedParameters(features: Features): string[] {
  return [
    ...BASE_PARAMETERS,
    ...(features.tools ? ["tools", "tool_choice", "parallel_tool_calls"] : []),
    ...(features.json_schema ? ["structured_outputs"] : []),
  ];
}

export function inputModalities(features: Features): ("text" | "image")[] {
  return features.vision ? ["text", "image"] : ["text"];
}
