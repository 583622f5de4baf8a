/**
 * The router's shapes on the wire: the chat-completions request we accept, the chat.completion we answer (with what
 * it cost), and the generation record GET /v1/generations/{id} returns. Client-safe: the docs page quotes the
 * request's bounds, the agent CLI reads the cost.
 */
import { z } from "zod";
import { ProviderPreferencesSchema } from "@/lib/market/provider-schemas";
import { Cents, COMPLETION_ENDS, component, Diem, Timestamp, Usdc } from "@/lib/wire";

// ─── request ─────────────────────────────────────────────────────────────────

/**
 * The OpenAI chat-completions request we accept and forward: messages with content parts and tool calls,
 * function tools, structured outputs, logprobs and the sampling fields, each bounded, each refused with a
 * 400 that names it. Streaming and n > 1 are refused (one completion is one clear); `stream: true` is
 * reported as stream_not_supported before anything else, unknown fields as unknown_field.
 */

/** OpenAI's rule for function and schema names. */
export const Name = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, underscores or dashes");
export const Text = z.string().max(2_000_000);
/** A JSON schema's nesting; a body's own limit (MAX_JSON_DEPTH, at least 40) leaves room for it and the request around it. */
const MAX_SCHEMA_DEPTH = 32;
export const MAX_IMAGES = 64;
export const MAX_TOOLS = 128;

/** A JSON-schema object (kept as sent); nesting is bounded so nothing recursive can overflow on it. */
export const JsonSchemaObject = z
  .record(z.string(), z.unknown())
  .refine((value) => jsonDepth(value) <= MAX_SCHEMA_DEPTH, `must nest at most ${MAX_SCHEMA_DEPTH} levels`)
  .describe("A JSON Schema object");

function jsonDepth(root: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_SCHEMA_DEPTH) return deepest;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return deepest;
}

const TextPart = z.strictObject({ type: z.literal("text"), text: Text });
/** An image's URL as we forward it: https, or an inline data URL of the four formats every vision upstream reads. */
export const ImageUrl = z
  .string()
  .max(2_000_000)
  .regex(/^(https:\/\/|data:image\/(png|jpeg|gif|webp);base64,)/i, "must be an https URL or a data:image/(png|jpeg|gif|webp);base64 URL");
const ImagePart = z.strictObject({
  type: z.literal("image_url"),
  image_url: z.strictObject({
    url: ImageUrl,
    detail: z.enum(["auto", "low", "high"]).optional(),
  }),
});
const RefusalPart = z.strictObject({ type: z.literal("refusal"), refusal: Text });

const ToolCall = z.strictObject({
  id: z.string().min(1).max(256),
  type: z.literal("function"),
  function: z.strictObject({ name: Name, arguments: Text }),
});

const TextContent = z.union([Text, z.array(TextPart).min(1).max(1000)]);

const SystemMessage = z.strictObject({ role: z.literal("system"), content: TextContent, name: Name.optional() });
const DeveloperMessage = z.strictObject({ role: z.literal("developer"), content: TextContent, name: Name.optional() });
const UserMessage = z.strictObject({
  role: z.literal("user"),
  content: z.union([
    Text,
    z
      .array(z.discriminatedUnion("type", [TextPart, ImagePart]))
      .min(1)
      .max(1000),
  ]),
  name: Name.optional(),
});
const AssistantMessage = z
  .strictObject({
    role: z.literal("assistant"),
    content: z.union([Text, z.array(z.discriminatedUnion("type", [TextPart, RefusalPart])).max(1000)]).nullish(),
    refusal: Text.nullish(),
    name: Name.optional(),
    tool_calls: z.array(ToolCall).min(1).max(MAX_TOOLS).optional(),
  })
  .refine((m) => m.content != null || m.tool_calls !== undefined, {
    message: "an assistant message needs content or tool_calls",
    path: ["content"],
  });
const ToolMessage = z.strictObject({ role: z.literal("tool"), content: TextContent, tool_call_id: z.string().min(1).max(256) });

const Message = z.discriminatedUnion("role", [SystemMessage, DeveloperMessage, UserMessage, AssistantMessage, ToolMessage]);

const Tool = z.strictObject({
  type: z.literal("function"),
  function: z.strictObject({
    name: Name,
    description: z.string().max(100_000).optional(),
    parameters: JsonSchemaObject.optional(),
    strict: z.boolean().nullish(),
  }),
});

const ToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.strictObject({ type: z.literal("function"), function: z.strictObject({ name: Name }) }),
]);

const ResponseFormat = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text") }),
  z.strictObject({ type: z.literal("json_object") }),
  z.strictObject({
    type: z.literal("json_schema"),
    json_schema: z.strictObject({
      name: Name,
      description: z.string().max(100_000).optional(),
      schema: JsonSchemaObject.optional(),
      strict: z.boolean().nullish(),
    }),
  }),
]);

/** `stream: true` is refused with its own code, ahead of every other problem (parseInput reads `params.code`). */
export const Stream = z
  .boolean()
  .nullish()
  .refine((stream): boolean => stream !== true, {
    message: "stream: true is not supported in v1; send stream: false or omit it.",
    params: { code: "stream_not_supported" },
  });

const ReasoningEffortSchema = z.enum(["none", "minimal", "low", "medium", "high"]);

/** OpenRouter's reasoning object; its effort is forwarded as reasoning_effort, the budget is svc's bound on what is billed. */
export const ReasoningSchema = z
  .strictObject({
    effort: ReasoningEffortSchema.nullish().describe("As reasoning_effort (send one of the two, or the same value in both)"),
    max_tokens: z
      .number()
      .int()
      .min(1)
      .nullish()
      .describe(
        "The reasoning budget: at most this many hidden reasoning tokens are billed; the output forwarded and reserved is max_tokens (or the model's cap) plus this, within the model's cap",
      ),
    enabled: z.boolean().nullish().describe("true asks for reasoning at effort medium; false for none"),
    exclude: z.boolean().nullish().describe("true: the answer leaves out the visible reasoning (it is still billed)"),
  })
  .describe("OpenRouter's reasoning settings: effort, a budget of reasoning tokens, whether the answer shows the reasoning");

// ─── OpenRouter's and OpenAI's other fields ──────────────────────────────────

/**
 * Sampling fields OpenAI-compatible servers outside OpenAI read (vLLM, SGLang, llama.cpp, Venice, OpenRouter), forwarded
 * as sent (lib/router/forwarded-fields.ts). An upstream that does not know one ignores it or refuses the request (a 502,
 * nothing charged).
 */
export const SAMPLING_FIELDS = {
  top_k: z.number().int().min(0).max(10_000).nullish().describe("Sample from the k likeliest tokens (0: all); forwarded"),
  min_p: z.number().min(0).max(1).nullish().describe("Drop tokens less likely than min_p × the likeliest; forwarded"),
  repetition_penalty: z
    .number()
    .gt(0)
    .max(2)
    .nullish()
    .describe("Penalizes tokens already in the prompt or the answer (1: none); forwarded"),
};

/**
 * Fields OpenRouter's and OpenAI's clients send that svc accepts and does not act on, each with the reason. A request
 * that sends one (with a value that would ask for something) gets `X-Svc-Ignored-Fields` naming it: nothing is
 * silently dropped, and nothing a client sends by default is a 400.
 */
export const IGNORED_FIELDS = {
  models: {
    schema: z.array(z.string().min(1).max(200)).max(32).nullish(),
    why: "svc routes the one `model` to its cheapest eligible offer and forwards once (one reservation, one clear): there is no fallback to other models; send the model you want as `model`",
  },
  route: {
    schema: z.literal("fallback").nullish(),
    why: "OpenRouter's fallback routing among `models`, which svc does not do",
  },
  transforms: {
    schema: z.array(z.string().max(64)).max(16).nullish(),
    why: "svc never rewrites a prompt (no middle-out compression): a prompt longer than the model's context is a 400",
  },
  top_a: {
    schema: z.number().min(0).max(1).nullish(),
    why: "OpenRouter's own sampler, which the OpenAI-compatible servers svc forwards to do not take",
  },
  usage: {
    schema: z.strictObject({ include: z.boolean().nullish() }).nullish(),
    why: "usage, with its cost, is always in the answer; include: false cannot leave it out",
    ignored: (value: unknown) => (value as { include?: boolean | null } | null)?.include === false,
  },
  service_tier: {
    schema: z.enum(["auto", "default", "flex", "priority", "scale"]).nullish(),
    why: "svc has one tier: every request is served by the cheapest eligible offer",
  },
  prompt_cache_key: {
    schema: z.string().max(1024).nullish(),
    why: "OpenAI's cache routing hint; svc routes by price, and an upstream's own prompt cache applies as it does",
  },
  safety_identifier: {
    schema: z.string().max(1024).nullish(),
    why: "OpenAI's end-user id for abuse detection; svc forwards `user` only",
  },
  verbosity: {
    schema: z.enum(["low", "medium", "high"]).nullish(),
    why: "OpenAI's GPT-5 setting, which the OpenAI-compatible servers svc forwards to do not take; ask for brevity in the prompt",
  },
  store: {
    schema: z.boolean().nullish(),
    why: "svc stores no completions for later retrieval or distillation",
    ignored: (value: unknown) => value === true,
  },
  prediction: {
    schema: z.strictObject({ type: z.literal("content"), content: z.union([Text, z.array(TextPart).max(1000)]) }).nullish(),
    why: "OpenAI's predicted outputs, a latency optimisation the upstreams svc forwards to do not take; the answer is the same without it",
  },
} satisfies Record<string, { schema: z.ZodType; why: string; ignored?: (value: unknown) => boolean }>;

type IgnorableField = { why: string; ignored?: (value: unknown) => boolean };

/** The fields of `body` listed in `fields` that it sent with a value svc does not act on, in the table's order. */
export function ignoredFieldsOf(body: Record<string, unknown>, fields: Record<string, IgnorableField>, prefix = ""): string[] {
  const names: string[] = [];
  for (const [name, field] of Object.entries(fields)) {
    const value = body[name];
    if (value == null) continue;
    if (field.ignored ? field.ignored(value) : true) names.push(`${prefix}${name}`);
  }
  return names;
}

/** What the chat request sent that svc accepted and ignored (X-Svc-Ignored-Fields). */
export function ignoredChatFields(body: Record<string, unknown>): string[] {
  return ignoredFieldsOf(body, IGNORED_FIELDS);
}

function ignoredSchemas<T extends Record<string, { schema: z.ZodType; why: string }>>(fields: T): { [K in keyof T]: T[K]["schema"] } {
  return Object.fromEntries(
    Object.entries(fields).map(([name, field]) => [
      name,
      field.schema.describe(`Accepted and ignored (X-Svc-Ignored-Fields names it): ${field.why}`),
    ]),
  ) as { [K in keyof T]: T[K]["schema"] };
}

/** Fields svc refuses with a 400 that says why (rather than unknown_field): they ask for something it cannot do. */
function refusedField(message: string) {
  return z
    .unknown()
    .optional()
    .refine((value) => value == null, { message, params: { code: "invalid_request" } });
}

export const ChatCompletionRequest = z
  .strictObject({
    model: z.string().min(1).max(200),
    messages: z.array(Message).min(1, "must contain at least one message").max(1000),
    stream: Stream,
    stream_options: z
      .strictObject({ include_usage: z.boolean().optional() })
      .nullish()
      .describe("Accepted (and ignored) because the answer is never streamed"),
    max_tokens: z.number().int().min(1).nullish(),
    max_completion_tokens: z.number().int().min(1).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    stop: z.union([z.string().max(256), z.array(z.string().max(256)).max(4)]).nullish(),
    user: z.string().max(256).nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    seed: z.number().int().nullish(),
    n: z.literal(1).nullish(),
    tools: z.array(Tool).max(MAX_TOOLS).nullish(),
    tool_choice: ToolChoice.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    response_format: ResponseFormat.nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.number().int().min(0).max(20).nullish(),
    logit_bias: z
      .record(z.string().regex(/^\d{1,7}$/, "keys must be token ids"), z.number().min(-100).max(100))
      .refine((bias) => Object.keys(bias).length <= 1024, "must bias at most 1024 tokens")
      .nullish(),
    reasoning_effort: ReasoningEffortSchema.nullish().describe(
      "Asks for reasoning (none: asks for none). On a model that bills reasoning (bills_reasoning) the hidden reasoning billed is bounded by the reasoning budget (reasoning.max_tokens, else max_completion_tokens, else a default by effort: minimal 256, low 512, medium 1024, high 2048 tokens) and by what the answer makes plausible",
    ),
    reasoning: ReasoningSchema.nullish(),
    metadata: z
      .record(z.string().max(64), z.string().max(512))
      .refine((m) => Object.keys(m).length <= 16, "must have at most 16 keys")
      .nullish()
      .describe("Accepted for OpenAI compatibility; kept by nobody and not forwarded"),
    provider: ProviderPreferencesSchema.nullish(),
    ...SAMPLING_FIELDS,
    ...ignoredSchemas(IGNORED_FIELDS),
    modalities: z
      .array(z.literal("text", { error: 'svc answers text only: send ["text"] or leave modalities out' }))
      .max(1)
      .nullish()
      .describe('["text"] (the only output svc serves)'),
    audio: refusedField("is not supported: svc answers text only (no audio output)"),
    web_search_options: refusedField("is not supported: svc runs no built-in web search; give the model a function tool instead"),
    plugins: refusedField("is not supported: svc runs no OpenRouter plugins (web search, file parsing, ...)"),
  })
  .superRefine((body, ctx) => {
    const tools = body.tools ?? [];
    const names = new Set<string>();
    for (const [i, tool] of tools.entries()) {
      if (names.has(tool.function.name)) {
        ctx.addIssue({ code: "custom", path: ["tools", i, "function", "name"], message: `"${tool.function.name}" is defined twice` });
      }
      names.add(tool.function.name);
    }
    if (tools.length === 0) {
      for (const field of ["tool_choice", "parallel_tool_calls"] as const) {
        if (body[field] != null) ctx.addIssue({ code: "custom", path: [field], message: "is only allowed with tools" });
      }
    }
    const choice = body.tool_choice;
    if (choice && typeof choice === "object" && tools.length > 0 && !names.has(choice.function.name)) {
      ctx.addIssue({
        code: "custom",
        path: ["tool_choice", "function", "name"],
        message: `names no tool in tools ("${choice.function.name}")`,
      });
    }
    const reasoning = body.reasoning;
    if (reasoning?.effort != null && body.reasoning_effort != null && reasoning.effort !== body.reasoning_effort) {
      ctx.addIssue({ code: "custom", path: ["reasoning", "effort"], message: `contradicts reasoning_effort ("${body.reasoning_effort}")` });
    }
    const effort = body.reasoning_effort ?? reasoning?.effort;
    if (reasoning?.max_tokens != null && (effort === "none" || reasoning.enabled === false)) {
      ctx.addIssue({ code: "custom", path: ["reasoning", "max_tokens"], message: "is a budget for reasoning the request turns off" });
    } else if (reasoning?.enabled === false && effort != null && effort !== "none") {
      ctx.addIssue({ code: "custom", path: ["reasoning", "enabled"], message: `false contradicts the effort "${effort}"` });
    }
    if (body.top_logprobs != null && body.logprobs !== true) {
      ctx.addIssue({ code: "custom", path: ["top_logprobs"], message: "needs logprobs: true" });
    }
    let images = 0;
    for (const message of body.messages) {
      if (message.role === "user" && Array.isArray(message.content)) images += message.content.filter((p) => p.type === "image_url").length;
    }
    if (images > MAX_IMAGES) ctx.addIssue({ code: "custom", path: ["messages"], message: `must contain at most ${MAX_IMAGES} images` });
  });

export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

// ─── response ────────────────────────────────────────────────────────────────

const ToolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string().describe("JSON text, as the model wrote it") }),
});

/**
 * A completion's id, as lib/router/complete.ts makes them (`chatcmpl-`, 9 characters of time, 25 random base62
 * ones: lib/auth/tokens.ts timeOrderedId; the pattern also
 * takes the shorter and longer alphanumeric ids of tests and benches). Anything else is not an id: a 400.
 */
export const COMPLETION_ID_PATTERN = /^chatcmpl-[A-Za-z0-9]{1,64}$/;

/**
 * What a completion cost, exactly as its clear posted it: `charge` is the buyer's journal line, `supplier_share` and
 * `platform_fee` the other two (they add up to the charge), each a decimal string to the micro-unit.
 */
export const CostDetailsSchema = component(
  "CostDetails",
  z.object({
    charge: Usdc.describe("What you paid for this completion (= usage.cost, exactly; = X-Svc-Cost), USDC"),
    supplier_share: Usdc.describe("The supplier's share of the charge, USDC"),
    platform_fee: Usdc.describe("The platform's fee, USDC: charge − supplier_share"),
    burn: Diem.describe("Capacity burned: the billed tokens at the model's list price (the prices of the reservation), diem"),
    price_cents_per_diem: Cents.describe(
      "The price of the offer that served it; charge = ⌈burn × price / 100⌉ micro-USDC, at most the reservation",
    ),
    billed_prompt_tokens: z.number().int().describe("The prompt tokens billed (= usage.prompt_tokens)"),
    billed_completion_tokens: z.number().int().describe("The completion tokens billed (= usage.completion_tokens)"),
    claimed_prompt_tokens: z
      .number()
      .int()
      .nullable()
      .describe("The prompt tokens the upstream reported; null when it reported no usage (then svc's own count is billed)"),
    claimed_completion_tokens: z.number().int().nullable().describe("The completion tokens the upstream reported; null as above"),
    billed_reasoning_tokens: z
      .number()
      .int()
      .nullable()
      .describe(
        "The reasoning tokens billed, within billed_completion_tokens (= usage.completion_tokens_details.reasoning_tokens); on a model that bills hidden reasoning, at most the request's reasoning budget and what the answer makes plausible. null when the upstream reported none",
      ),
    claimed_reasoning_tokens: z
      .number()
      .int()
      .nullable()
      .describe("The reasoning tokens the upstream reported (completion_tokens_details.reasoning_tokens); null when it reported none"),
    counted_prompt_tokens: z
      .number()
      .int()
      .nullable()
      .describe("svc's own count of the prompt (its tokenizer, the messages and tools sent); null on completions from before it was kept"),
    counted_completion_tokens: z
      .number()
      .int()
      .nullable()
      .describe(
        "svc's own count of the billable reply (content, refusal, visible reasoning, and tool calls when tools were sent), at most the max_tokens forwarded; null as above",
      ),
    reasoning_tokens_bound: z
      .number()
      .int()
      .nullable()
      .describe(
        "Hidden reasoning cannot be counted, only bounded: the most reasoning svc accepts for this answer (the request's reasoning budget, and what an answer of counted_completion_tokens makes plausible); null when the model does not bill reasoning or the request did not ask for it",
      ),
    billed_cached_tokens: z
      .number()
      .int()
      .nullable()
      .describe(
        "The prompt tokens billed at the model's cache-read price, within billed_prompt_tokens (= usage.prompt_tokens_details.cached_tokens): on an offer that caches prompts, the larger of the upstream's claim and what svc itself sent that offer within its declared retention. null when the offer does not cache (every prompt token at the input price)",
      ),
    claimed_cached_tokens: z
      .number()
      .int()
      .nullable()
      .describe("The cached prompt tokens the upstream reported (prompt_tokens_details.cached_tokens); null when it reported none"),
    usage_estimated: z.boolean().describe("The upstream reported no usage: svc counted the tokens itself"),
    usage_disputed: z
      .boolean()
      .describe(
        "The upstream's claim exceeded svc's own count beyond the tolerance, or its reasoning claim the bound: svc's count (and the bound) was billed, not the claim",
      ),
  }),
);
export type CostDetails = z.output<typeof CostDetailsSchema>;

export const CostFields = {
  cost: z
    .number()
    .describe("What this completion cost, USD (a JSON number, as OpenRouter reports it; cost_details.charge is the exact decimal)"),
  cost_details: CostDetailsSchema,
};

/** What POST /v1/chat/completions answers: OpenAI's chat.completion object, with our own id and the buyer's model. */
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
          reasoning_content: z
            .string()
            .optional()
            .describe("The model's visible reasoning, when the upstream returns it (billed as output)"),
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
        prompt_tokens_details: z
          .object({ cached_tokens: z.number().int() })
          .optional()
          .describe(
            "cached_tokens: on an offer that caches prompts, the prompt tokens billed at the cache-read price (verified: at least what svc sent that offer within its retention); elsewhere the upstream's report",
          ),
        completion_tokens_details: z
          .object({ reasoning_tokens: z.number().int().describe("The reasoning tokens billed (within completion_tokens)") })
          .optional(),
        ...CostFields,
      })
      .describe(
        "What was billed: the upstream's claim when within the tolerance of our own count, else our count; and what it cost, to the micro-unit of its journal entry",
      ),
    system_fingerprint: z.string().optional(),
  }),
);

export type ChatCompletionResponse = z.output<typeof ChatCompletionSchema>;

export { COMPLETION_ENDS, type CompletionEnd } from "@/lib/wire";

/**
 * GET /v1/generations/{id}: one completion of the caller's account as it was cleared, for any of its keys and its
 * session: who served it, what was billed against what was claimed, what it cost and where it is in the ledger.
 */
export const GenerationSchema = component(
  "Generation",
  z.object({
    id: z
      .string()
      .describe("The id the buyer was given: the answer's id, chatcmpl-… from chat completions, resp_… from POST /v1/responses"),
    completion_id: z.string().describe("The completion's own id (chatcmpl-…, X-Svc-Generation-Id); the same as id for a chat completion"),
    object: z.literal("generation"),
    created_at: Timestamp.describe("When it was cleared"),
    model: z.string(),
    offer_id: z.string().describe("The offer that served it"),
    supplier_id: z
      .string()
      .describe("The supplier's public id (sup_…): the same for every offer of one supplier; neither its wallet nor its account"),
    supplier_name: z.string().nullable().describe("The name the supplier chose (PATCH /v1/account display_name); null = none"),
    finish_reason: z
      .enum(["stop", "length", "tool_calls", "content_filter"])
      .nullable()
      .describe("null for completions from before it was kept"),
    usage: z.object({
      prompt_tokens: z.number().int(),
      completion_tokens: z.number().int(),
      total_tokens: z.number().int(),
      prompt_tokens_details: z
        .object({ cached_tokens: z.number().int() })
        .optional()
        .describe("The prompt tokens billed at the cache-read price, on an offer that caches (as in the answer)"),
      completion_tokens_details: z
        .object({ reasoning_tokens: z.number().int() })
        .optional()
        .describe("The reasoning tokens billed, when the upstream reported reasoning (as in the answer)"),
      ...CostFields,
    }),
    upstream_latency_ms: z.number().int().describe("The supplier's upstream: from the forward sent to its answer read"),
    total_latency_ms: z
      .number()
      .int()
      .nullable()
      .describe(
        "The request's own: from its arrival at svc to its clear (the answer is written right after); null for completions from before it was kept",
      ),
    end: z
      .enum(COMPLETION_ENDS)
      .describe(
        "How the answer ended: completed (read whole), or a stream cut short by the client (client_cancelled), by the upstream's error (upstream_error) or by a deadline (timeout), billed for what was delivered",
      ),
    streamed: z.boolean().describe("Whether the answer was streamed to the client"),
    key: z.object({ id: z.string(), name: z.string(), prefix: z.string() }).describe("The API key that made it"),
    journal_entry_id: z.string().describe("Its clear's journal entry (buyer −charge, supplier +share, platform +fee)"),
  }),
);
export type Generation = z.output<typeof GenerationSchema>;
