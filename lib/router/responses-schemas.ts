/**
 * POST /v1/responses on the wire: the stateless subset of OpenAI's Responses API we accept, and the `response` object
 * we answer. svc keeps no conversation state and its upstreams are chat-completion endpoints, so a request is what one
 * chat completion can serve (lib/router/responses-translation.ts maps it): fields that need stored state or a tool svc
 * does not run (previous_response_id, built-in tools, background) are refused with a 400 naming them, `stream: true`
 * is stream_not_supported (ahead of any other problem), any other unknown field is unknown_field. Bounds are the chat
 * request's own (lib/router/schemas.ts). Client-safe: the docs quote it.
 */
import { z } from "zod";
import { component } from "@/lib/wire";
import { ProviderPreferencesSchema } from "@/lib/market/provider-schemas";
import {
  CostFields,
  IGNORED_FIELDS,
  ignoredFieldsOf,
  ImageUrl,
  JsonSchemaObject,
  MAX_IMAGES,
  MAX_TOOLS,
  Name,
  SAMPLING_FIELDS,
  Stream,
  Text,
} from "@/lib/router/schemas";

// ─── request ─────────────────────────────────────────────────────────────────

/** A field svc cannot serve: named in a 400 (parseInput reads `params.code`), before anything is reserved. */
function refused(message: string) {
  return z
    .unknown()
    .optional()
    .refine((value) => value === undefined || value === null || value === false, {
      message,
      params: { code: "invalid_request" },
    });
}

const ItemId = z.string().min(1).max(256);
const ItemStatus = z.enum(["in_progress", "completed", "incomplete"]).optional();

const InputText = z.strictObject({ type: z.literal("input_text"), text: Text });
const InputImage = z.strictObject({
  type: z.literal("input_image"),
  image_url: ImageUrl.describe("An https URL or a data: URL (file_id is not supported: svc stores no files)"),
  detail: z.enum(["auto", "low", "high"]).optional(),
});
/** What an earlier response's message said, sent back as context. */
const OutputText = z.strictObject({
  type: z.literal("output_text"),
  text: Text,
  annotations: z.array(z.unknown()).max(1000).optional(),
  logprobs: z.array(z.unknown()).optional(),
});
const Refusal = z.strictObject({ type: z.literal("refusal"), refusal: Text });

const UserContent = z.union([
  Text,
  z
    .array(z.discriminatedUnion("type", [InputText, InputImage]))
    .min(1)
    .max(1000),
]);
const InstructionContent = z.union([Text, z.array(InputText).min(1).max(1000)]);
const AssistantContent = z.union([Text, z.array(z.discriminatedUnion("type", [OutputText, Refusal])).max(1000)]);

const MessageBase = { type: z.literal("message").optional(), id: ItemId.optional(), status: ItemStatus };
const UserItem = z.strictObject({ ...MessageBase, role: z.literal("user"), content: UserContent });
const SystemItem = z.strictObject({ ...MessageBase, role: z.literal("system"), content: InstructionContent });
const DeveloperItem = z.strictObject({ ...MessageBase, role: z.literal("developer"), content: InstructionContent });
const AssistantItem = z.strictObject({ ...MessageBase, role: z.literal("assistant"), content: AssistantContent });
const MessageItem = z.discriminatedUnion("role", [UserItem, SystemItem, DeveloperItem, AssistantItem]);

const FunctionCallItem = z.strictObject({
  type: z.literal("function_call"),
  id: ItemId.optional(),
  status: ItemStatus,
  call_id: z.string().min(1).max(256),
  name: Name,
  arguments: Text,
});
const FunctionCallOutputItem = z.strictObject({
  type: z.literal("function_call_output"),
  id: ItemId.optional(),
  status: ItemStatus,
  call_id: z.string().min(1).max(256),
  output: z.union([Text, z.array(InputText).min(1).max(1000)]),
});
/** An earlier response's reasoning, sent back by agents: accepted and not forwarded (chat upstreams take none). */
const ReasoningItem = z.strictObject({
  type: z.literal("reasoning"),
  id: ItemId.optional(),
  status: ItemStatus,
  summary: z.array(z.unknown()).max(1000).optional(),
  content: z.array(z.unknown()).max(1000).optional(),
  encrypted_content: z.string().max(2_000_000).nullish(),
});

const ITEMS = {
  message: MessageItem,
  function_call: FunctionCallItem,
  function_call_output: FunctionCallOutputItem,
  reasoning: ReasoningItem,
};
type InputItemOut = z.infer<(typeof ITEMS)[keyof typeof ITEMS]>;

/**
 * One input item, checked by its type (a message may leave it out, as OpenAI allows), so a problem is named at its own
 * field. Any other type (item_reference, the built-in tools' calls) is refused: svc stores no items and runs no tools.
 */
const InputItem = z
  .looseObject({ type: z.string().max(64).optional() })
  .superRefine((item, ctx) => {
    const type = item.type ?? "message";
    const schema = Object.hasOwn(ITEMS, type) ? ITEMS[type as keyof typeof ITEMS] : null;
    if (!schema) {
      ctx.addIssue({
        code: "custom",
        path: ["type"],
        message: `"${type}" is not supported: input items are message, function_call, function_call_output or reasoning (svc stores no items to refer to)`,
        params: { code: "invalid_request" },
      });
      return;
    }
    const parsed = schema.safeParse(item);
    if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, input: undefined });
  })
  .describe(
    "An input item by its type: `message` (the type may be left out) {role: user|system|developer|assistant, content: a string or parts: input_text {text}, input_image {image_url: https or data: URL, detail?} for users, output_text {text} and refusal {refusal} for the assistant}; `function_call` {call_id, name, arguments}; `function_call_output` {call_id, output: a string or input_text parts}; `reasoning` (accepted, not forwarded). Any other type is a 400 naming input.N.type.",
  ) as unknown as z.ZodType<InputItemOut>;

const FunctionTool = z.strictObject({
  type: z.literal("function"),
  name: Name,
  description: z.string().max(100_000).nullish(),
  parameters: JsonSchemaObject.nullish(),
  strict: z.boolean().nullish(),
});
/**
 * A tool (or a tool choice) by its type: a function is checked against `schema`, any other type (web search, file
 * search, computer use, code interpreter, ...) is a tool svc does not run, refused with a 400 naming its type.
 */
function functionOnly<S extends z.ZodType>(schema: S, message: string) {
  return z.looseObject({ type: z.string().max(64) }).superRefine((value, ctx) => {
    if (value.type !== "function") {
      ctx.addIssue({ code: "custom", path: ["type"], message, params: { code: "invalid_request" } });
      return;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, input: undefined });
  }) as unknown as S;
}

const Tool = functionOnly(
  FunctionTool,
  "is not supported: svc runs no built-in tools (web search, file search, computer use, ...); use tools of type function",
).describe(
  "A function tool {type: function, name, description?, parameters? (JSON Schema), strict?}; built-in tools (web search, file search, computer use, ...) are a 400 naming tools.N.type",
);

const ToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  functionOnly(
    z.strictObject({ type: z.literal("function"), name: Name }),
    "only none, auto, required or a function tool can be chosen: svc runs no built-in tools",
  ).describe("{type: function, name}: call this function"),
]);

const TextFormat = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text") }),
  z.strictObject({ type: z.literal("json_object") }),
  z.strictObject({
    type: z.literal("json_schema"),
    name: Name,
    description: z.string().max(100_000).optional(),
    schema: JsonSchemaObject,
    strict: z.boolean().nullish(),
  }),
]);

/** The chat request's accepted-and-ignored fields that a Responses client sends too (X-Svc-Ignored-Fields). */
const { models, route, transforms, top_a, usage, service_tier, prompt_cache_key, safety_identifier } = IGNORED_FIELDS;
const SHARED_IGNORED = { models, route, transforms, top_a, usage, service_tier, prompt_cache_key, safety_identifier };

/** The Responses API's own fields svc accepts and does not act on (their schemas are in the request below). */
const RESPONSES_IGNORED = {
  ...SHARED_IGNORED,
  store: { why: "svc stores no responses: the answer says store: false", ignored: (value: unknown) => value === true },
  include: {
    why: "nothing svc could include (encrypted reasoning, logprobs, tool sources) is kept",
    ignored: (value: unknown) => Array.isArray(value) && value.length > 0,
  },
  truncation: {
    why: "svc never truncates the input: a prompt too long is a 400",
    ignored: (value: unknown) => value === "auto",
  },
  top_logprobs: { why: "the Responses answer carries no logprobs here; use POST /v1/chat/completions with logprobs" },
  max_tool_calls: { why: "svc runs no built-in tools; function calls are yours to count" },
};
const TEXT_IGNORED = {
  verbosity: { why: "OpenAI's GPT-5 setting, which the OpenAI-compatible servers svc forwards to do not take" },
};

/** What the Responses request sent that svc accepted and ignored (X-Svc-Ignored-Fields). */
export function ignoredResponsesFields(body: ResponsesRequest): string[] {
  return [...ignoredFieldsOf(body, RESPONSES_IGNORED), ...ignoredFieldsOf(body.text ?? {}, TEXT_IGNORED, "text.")];
}

const ignoredNote = (why: string) => `Accepted and ignored (X-Svc-Ignored-Fields names it): ${why}`;

export const ResponsesRequest = z
  .strictObject({
    stream: Stream,
    model: z.string().min(1).max(200),
    input: z.union([Text, z.array(InputItem).min(1, "must contain at least one item").max(1000)]),
    instructions: Text.nullish(),
    tools: z.array(Tool).max(MAX_TOOLS).nullish(),
    tool_choice: ToolChoice.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    text: z
      .strictObject({
        format: TextFormat.optional(),
        verbosity: z.enum(["low", "medium", "high"]).nullish().describe(ignoredNote(TEXT_IGNORED.verbosity.why)),
      })
      .nullish(),
    max_output_tokens: z.number().int().min(1).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    reasoning: z
      .strictObject({
        effort: z.enum(["none", "minimal", "low", "medium", "high"]).nullish(),
        max_tokens: z
          .number()
          .int()
          .min(1)
          .nullish()
          .describe(
            "The reasoning budget (OpenRouter's): at most this many hidden reasoning tokens are billed (chat completions' reasoning.max_tokens); without it, max_output_tokens, else a default by effort",
          ),
        summary: z.enum(["auto", "concise", "detailed"]).nullish().describe("Accepted; the upstream's visible reasoning is returned as is"),
      })
      .nullish(),
    metadata: z
      .record(z.string().max(64), z.string().max(512))
      .refine((m) => Object.keys(m).length <= 16, "must have at most 16 keys")
      .nullish()
      .describe("Accepted and echoed in the answer; not forwarded, not kept"),
    user: z.string().max(256).nullish(),
    store: z.boolean().nullish().describe(ignoredNote(RESPONSES_IGNORED.store.why)),
    include: z.array(z.string().max(128)).max(32).nullish().describe(ignoredNote(RESPONSES_IGNORED.include.why)),
    truncation: z.enum(["disabled", "auto"]).nullish().describe(ignoredNote(RESPONSES_IGNORED.truncation.why)),
    top_logprobs: z.number().int().min(0).max(20).nullish().describe(ignoredNote(RESPONSES_IGNORED.top_logprobs.why)),
    max_tool_calls: z.number().int().min(1).nullish().describe(ignoredNote(RESPONSES_IGNORED.max_tool_calls.why)),
    ...(Object.fromEntries(
      Object.entries(SHARED_IGNORED).map(([name, field]) => [name, field.schema.describe(ignoredNote(field.why))]),
    ) as {
      [K in keyof typeof SHARED_IGNORED]: (typeof SHARED_IGNORED)[K]["schema"];
    }),
    ...SAMPLING_FIELDS,
    provider: ProviderPreferencesSchema.nullish(),
    previous_response_id: refused("is not supported: svc stores no responses; send the whole conversation in input"),
    conversation: refused("is not supported: svc stores no conversations; send the whole conversation in input"),
    background: refused("is not supported: svc answers every response in the request that asks for it"),
    prompt: refused("is not supported: svc stores no prompt templates"),
  })
  .superRefine((body, ctx) => {
    const tools = body.tools ?? [];
    const names = new Set<string>();
    for (const [i, tool] of tools.entries()) {
      if (names.has(tool.name)) ctx.addIssue({ code: "custom", path: ["tools", i, "name"], message: `"${tool.name}" is defined twice` });
      names.add(tool.name);
    }
    const choice = body.tool_choice;
    // auto and none say nothing without tools (clients send them by default); a demand for a call needs something to call.
    if (choice === "required" && tools.length === 0)
      ctx.addIssue({ code: "custom", path: ["tool_choice"], message: "required needs tools" });
    if (choice && typeof choice === "object" && !names.has(choice.name)) {
      ctx.addIssue({ code: "custom", path: ["tool_choice", "name"], message: `names no tool in tools ("${choice.name}")` });
    }
    if (typeof body.input !== "string") {
      let images = 0;
      for (const item of body.input) {
        if ("role" in item && item.role === "user" && Array.isArray(item.content))
          images += item.content.filter((p) => p.type === "input_image").length;
      }
      if (images > MAX_IMAGES) ctx.addIssue({ code: "custom", path: ["input"], message: `must contain at most ${MAX_IMAGES} images` });
    }
  });

export type ResponsesRequest = z.infer<typeof ResponsesRequest>;
export type ResponsesInputItem = z.infer<typeof InputItem>;
export type ResponsesFunctionTool = z.infer<typeof FunctionTool>;

// ─── response ────────────────────────────────────────────────────────────────

const OutputMessage = z.object({
  type: z.literal("message"),
  id: z.string(),
  status: z.literal("completed"),
  role: z.literal("assistant"),
  content: z.array(
    z.discriminatedUnion("type", [
      z.object({ type: z.literal("output_text"), text: z.string(), annotations: z.array(z.unknown()) }),
      z.object({ type: z.literal("refusal"), refusal: z.string() }),
    ]),
  ),
});
const OutputFunctionCall = z.object({
  type: z.literal("function_call"),
  id: z.string(),
  status: z.literal("completed"),
  call_id: z.string().describe("Send it back with the tool's result as a function_call_output item"),
  name: z.string(),
  arguments: z.string().describe("JSON text, as the model wrote it"),
});
const OutputReasoning = z.object({
  type: z.literal("reasoning"),
  id: z.string(),
  summary: z.array(z.unknown()),
  content: z
    .array(z.object({ type: z.literal("reasoning_text"), text: z.string() }))
    .describe("The model's visible reasoning (billed as output)"),
});

const OutputItem = z.discriminatedUnion("type", [OutputReasoning, OutputMessage, OutputFunctionCall]);
export type ResponseOutputItem = z.output<typeof OutputItem>;

/** What POST /v1/responses answers: OpenAI's `response` object, completed or incomplete, with what it cost. */
export const ResponseSchema = component(
  "Response",
  z.object({
    id: z.string().describe("resp_… (ours); the same random part as its generation's id, chatcmpl-…, in X-Svc-Generation-Id"),
    object: z.literal("response"),
    created_at: z.number().int(),
    status: z.enum(["completed", "incomplete"]),
    incomplete_details: z
      .object({ reason: z.enum(["max_output_tokens", "content_filter"]) })
      .nullable()
      .describe("Why the answer stopped short: the output cap (max_output_tokens or the model's) or the upstream's filter"),
    error: z.null(),
    model: z.string().describe("The model as you named it"),
    instructions: z.string().nullable(),
    output: z.array(OutputItem),
    parallel_tool_calls: z.boolean(),
    tool_choice: z.unknown().describe("As sent (auto when none was)"),
    tools: z.array(z.unknown()).describe("As sent"),
    text: z.object({ format: z.record(z.string(), z.unknown()) }),
    reasoning: z.object({ effort: z.string().nullable(), summary: z.string().nullable() }),
    temperature: z.number().nullable(),
    top_p: z.number().nullable(),
    max_output_tokens: z.number().int().nullable(),
    metadata: z.record(z.string(), z.string()),
    user: z.string().nullable(),
    previous_response_id: z.null(),
    background: z.literal(false),
    truncation: z.literal("disabled"),
    store: z.literal(false).describe("Always false: svc stores no responses"),
    usage: z
      .object({
        input_tokens: z.number().int(),
        input_tokens_details: z.object({ cached_tokens: z.number().int() }),
        output_tokens: z.number().int(),
        output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
        total_tokens: z.number().int(),
        ...CostFields,
      })
      .describe("What was billed, as on chat completions (input = prompt, output = completion tokens), and what it cost"),
  }),
);
export type ResponseObject = z.output<typeof ResponseSchema>;
