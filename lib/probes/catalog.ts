import "server-only";

/**
 * The fidelity probes: a small fixed set of deterministic requests (temperature 0, a fixed seed, a small max_tokens)
 * whose answers honest deployments of one model agree on. Text probes go to every offer; the json_schema probe to
 * offers that serve structured outputs for the model, the tool probe to those that serve tools. To a model that bills
 * hidden reasoning every probe asks for reasoning (PROBE_REASONING_EFFORT), so the reasoning an offer claims is checked
 * as a buyer's would be (lib/upstream/metering.ts). Fixed in code: nothing a stranger sends ever becomes a probe.
 */

export type ProbeKind = "text" | "json_schema" | "tool";

export type ProbeDefinition = {
  name: string;
  kind: ProbeKind;
  messages: { role: "system" | "user"; content: string }[];
  /** The schema the answer (json_schema) or the named tool's arguments (tool) must satisfy. */
  schema?: Record<string, unknown>;
  toolName?: string;
};

/**
 * Room for a short answer, and for the reference upstream's one-sentence reply: the visible cap of every probe, and with
 * the reasoning budget of PROBE_REASONING_EFFORT (lib/upstream/metering.ts) the largest a probe can be billed for.
 */
export const PROBE_MAX_TOKENS = 128;
/** The effort a probe asks for on a model that bills reasoning: the least that asks for any. */
export const PROBE_REASONING_EFFORT = "low";
export const PROBE_SEED = 23;

const ONE_WORD = "Answer with one word only, no punctuation.";

const ANSWER_SCHEMA = {
  type: "object",
  properties: { answer: { type: "integer" } },
  required: ["answer"],
  additionalProperties: false,
};

const WEATHER_PARAMETERS = {
  type: "object",
  properties: { city: { type: "string" }, unit: { type: "string", enum: ["celsius", "fahrenheit"] } },
  required: ["city", "unit"],
  additionalProperties: false,
};

export const PROBES: readonly ProbeDefinition[] = [
  { name: "capital", kind: "text", messages: [{ role: "user", content: `What is the capital of France? ${ONE_WORD}` }] },
  { name: "arithmetic", kind: "text", messages: [{ role: "user", content: "What is 17 + 25? Answer with the number only." }] },
  { name: "opposite", kind: "text", messages: [{ role: "user", content: `What is the opposite of "hot"? ${ONE_WORD}` }] },
  {
    name: "json",
    kind: "json_schema",
    messages: [{ role: "user", content: "What is 6 times 7? Reply with a JSON object whose `answer` is the number." }],
    schema: ANSWER_SCHEMA,
  },
  {
    name: "tool",
    kind: "tool",
    messages: [{ role: "user", content: "Call get_weather for Paris, in celsius." }],
    schema: WEATHER_PARAMETERS,
    toolName: "get_weather",
  },
];

/** The probes an offer gets for one of its models: the text ones, plus what the offer serves of the rest. */
export function probesFor(features: { supportsJsonSchema: boolean; supportsTools: boolean }): ProbeDefinition[] {
  return PROBES.filter((p) => p.kind === "text" || (p.kind === "json_schema" ? features.supportsJsonSchema : features.supportsTools));
}

/** The chat request a probe sends upstream, for the upstream's own model name; asking for reasoning on a reasoning model. */
export function probeRequest(
  probe: ProbeDefinition,
  upstreamModel: string,
  model: { billsReasoning: boolean } = { billsReasoning: false },
) {
  return {
    model: upstreamModel,
    messages: probe.messages,
    max_tokens: PROBE_MAX_TOKENS,
    temperature: 0,
    seed: PROBE_SEED,
    stream: false,
    ...(model.billsReasoning && { reasoning_effort: PROBE_REASONING_EFFORT }),
    ...(probe.kind === "json_schema" && {
      response_format: { type: "json_schema" as const, json_schema: { name: "probe_answer", schema: probe.schema!, strict: true } },
    }),
    ...(probe.kind === "tool" && {
      tools: [
        {
          type: "function" as const,
          function: { name: probe.toolName!, description: "The current weather in a city", parameters: probe.schema!, strict: true },
        },
      ],
      tool_choice: { type: "function" as const, function: { name: probe.toolName! } },
    }),
  };
}

export type ProbeRequest = ReturnType<typeof probeRequest>;
