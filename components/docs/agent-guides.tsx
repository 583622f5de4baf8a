/** The docs on tools and structured outputs (curl, Python, Node), and the rules of billing and offer health. */
import { C, CodeBlock } from "@/components/docs/code-block";
import { SubHeading } from "@/components/docs/doc-section";
import type { DeploymentFacts } from "@/components/docs/guides";
import {
  DEFAULT_REASONING_BUDGET_TOKENS,
  defaultReasoningBudget,
  MAX_PROMPT_BYTES_PER_CONTEXT_TOKEN,
  PROMPT_TEMPLATE_TOKENS,
  REASONING_EFFORTS,
  REASONING_TOKENS_PER_ANSWER_TOKEN,
  USAGE_TOLERANCE_FLOOR_TOKENS,
  USAGE_TOLERANCE_PERCENT,
} from "@/lib/upstream/metering";
import { MAX_IMAGES, MAX_TOOLS } from "@/lib/router/schemas";
import {
  LOGPROB_ENTRY_BYTES,
  OUTPUT_TOKENS_PER_SECOND,
  PROMPT_TOKENS_PER_SECOND,
  TEXT_BYTES_PER_TOKEN,
} from "@/lib/router/upstream-failure";
import {
  BASE_COOLDOWN_MS,
  DISPUTE_WINDOW_DAYS,
  DISTINCT_BUYERS_TO_COOL,
  LONE_STREAK_FAILURES,
  LONE_STREAK_MS,
  MAX_COOLDOWN_MS,
  STREAK_WINDOW_MS,
} from "@/lib/supply/offer-health";
import { DEFAULT_MAX_RESPONSE_BYTES } from "@/lib/upstream/client";
import { IMAGE_TOKENS } from "@/lib/upstream/tokens";

const WEATHER_TOOL = `{"type":"function","function":{"name":"get_weather","description":"Weather in a city",
  "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}}`;
const PERSON_SCHEMA = `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},
  "required":["name","age"],"additionalProperties":false}`;

export function ToolsAndStructuredOutputs({ facts }: { facts: DeploymentFacts }) {
  const { origin, exampleModel: model } = facts;
  return (
    <>
      <p>
        The endpoint takes OpenAI&apos;s request: <C>tools</C> (up to {MAX_TOOLS} functions), <C>tool_choice</C> (<C>none</C>, <C>auto</C>,{" "}
        <C>required</C> or a named function), <C>parallel_tool_calls</C>, assistant messages with <C>tool_calls</C> and <C>tool</C>{" "}
        messages, content parts (<C>text</C>, and <C>image_url</C> with an https or base64 data URL, up to {MAX_IMAGES} images),{" "}
        <C>response_format</C> (<C>text</C>, <C>json_object</C>, <C>json_schema</C> with <C>strict</C>), <C>logprobs</C>/<C>top_logprobs</C>
        , <C>logit_bias</C>, <C>reasoning_effort</C> and OpenRouter&apos;s <C>reasoning</C> object (<C>effort</C>, <C>max_tokens</C>,{" "}
        <C>enabled</C>, <C>exclude</C>), <C>stop</C>, <C>seed</C>, <C>user</C>. <C>metadata</C> and <C>stream_options</C> are accepted and
        not forwarded. Each field is checked and a bad one is a 400 whose <C>param</C> names it, before anything is reserved or charged; an
        unknown field is <C>unknown_field</C>. The answer comes back in OpenAI&apos;s shape (tool calls, refusal, finish reason, logprobs,
        fingerprint, usage details) under our own <C>id</C> and your <C>model</C>.
      </p>
      <p>
        What OpenRouter&apos;s and OpenAI&apos;s clients send besides is not a 400. OpenRouter&apos;s sampling fields <C>top_k</C>,{" "}
        <C>min_p</C> and <C>repetition_penalty</C> are forwarded as sent (vLLM, SGLang, llama.cpp and Venice read them). Fields svc has no
        use for are accepted and not forwarded, and the answer&apos;s <C>X-Svc-Ignored-Fields</C> header names those you sent: <C>models</C>{" "}
        and <C>route</C> (svc routes the one <C>model</C> to its cheapest offer and forwards once: no fallback to other models),{" "}
        <C>transforms</C> (no prompt compression), <C>top_a</C>, <C>usage</C> (usage and its cost are always in the answer),{" "}
        <C>service_tier</C>, <C>prompt_cache_key</C>, <C>safety_identifier</C>, <C>verbosity</C>, <C>store</C> and <C>prediction</C>.{" "}
        <C>modalities</C> may only be <C>[&quot;text&quot;]</C>; <C>audio</C>, <C>web_search_options</C> and OpenRouter&apos;s{" "}
        <C>plugins</C> are a 400 saying why. A model id written as another provider writes it (<C>meta-llama/llama-3.3-70b-instruct</C>) is
        a 404 whose <C>did_you_mean</C> names the catalog id.
      </p>
      <p>
        Not every offer serves every feature. <C>GET /v1/models</C> lists each model&apos;s <C>supported_parameters</C> (OpenRouter&apos;s
        names: <C>tools</C>, <C>structured_outputs</C>…) and <C>input_modalities</C>. A request using tools, a <C>json_schema</C> or images
        is routed only to offers that serve it; when none does you get 503 <C>no_offer_supports_tools</C>,{" "}
        <C>no_offer_supports_json_schema</C> or <C>no_offer_supports_vision</C> with the usual <C>X-Svc-*</C> headers.
      </p>

      <SubHeading id="tools-curl">A tool call and a JSON-schema answer with curl</SubHeading>
      <CodeBlock
        title="curl"
        language="sh"
        code={`# 1. the model asks for a tool call (finish_reason "tool_calls")
curl "${origin}/v1/chat/completions" -H "Authorization: Bearer $SVC_API_KEY" -H 'content-type: application/json' -d '{
  "model": "${model}",
  "messages": [{"role": "user", "content": "Weather in Paris?"}],
  "tools": [${WEATHER_TOOL}],
  "max_tokens": 200
}'
# 2. send the result back as a tool message; the model answers
curl "${origin}/v1/chat/completions" -H "Authorization: Bearer $SVC_API_KEY" -H 'content-type: application/json' -d '{
  "model": "${model}",
  "messages": [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\\"city\\":\\"Paris\\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\\"temperature\\": 21}"}
  ],
  "tools": [${WEATHER_TOOL}],
  "max_tokens": 200
}'
# a JSON answer that satisfies a schema
curl "${origin}/v1/chat/completions" -H "Authorization: Bearer $SVC_API_KEY" -H 'content-type: application/json' -d '{
  "model": "${model}",
  "messages": [{"role": "user", "content": "Invent a person"}],
  "response_format": {"type": "json_schema", "json_schema": {"name": "person", "strict": true, "schema": ${PERSON_SCHEMA}}},
  "max_tokens": 200
}'`}
      />

      <SubHeading id="tools-python">Python (openai)</SubHeading>
      <CodeBlock
        title="Python"
        language="py"
        code={`import json, os
from openai import OpenAI
from pydantic import BaseModel

client = OpenAI(base_url="${origin}/v1", api_key=os.environ["SVC_API_KEY"], max_retries=0)

tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
messages = [{"role": "user", "content": "Weather in Paris?"}]
first = client.chat.completions.create(model="${model}", messages=messages, tools=tools, max_tokens=200)
call = first.choices[0].message.tool_calls[0]
args = json.loads(call.function.arguments)           # {"city": "Paris"}
messages += [first.choices[0].message, {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"temperature": 21})}]
final = client.chat.completions.create(model="${model}", messages=messages, tools=tools, max_tokens=200)
print(final.choices[0].message.content)

class Person(BaseModel):
    name: str
    age: int

parsed = client.chat.completions.parse(model="${model}", messages=[{"role": "user", "content": "Invent a person"}],
                                       response_format=Person, max_tokens=200)
print(parsed.choices[0].message.parsed)             # Person(name=..., age=...)`}
      />

      <SubHeading id="tools-node">Node.js (openai, the Vercel AI SDK, LangChain)</SubHeading>
      <CodeBlock
        title="Node.js"
        language="ts"
        code={`import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";

const client = new OpenAI({ baseURL: "${origin}/v1", apiKey: process.env.SVC_API_KEY, maxRetries: 0 });
const tools = [{ type: "function" as const, function: { name: "get_weather", description: "Weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Paris?" }];

const first = await client.chat.completions.create({ model: "${model}", messages, tools, max_tokens: 200 });
const call = first.choices[0].message.tool_calls![0];
messages.push(first.choices[0].message, { role: "tool", tool_call_id: call.id, content: JSON.stringify({ temperature: 21 }) });
const final = await client.chat.completions.create({ model: "${model}", messages, tools, max_tokens: 200 });

const Person = z.object({ name: z.string(), age: z.number().int() });
const { choices } = await client.chat.completions.parse({
  model: "${model}", messages: [{ role: "user", content: "Invent a person" }], response_format: zodResponseFormat(Person, "person"),
  max_tokens: 200,
});
console.log(choices[0].message.parsed); // { name, age }

// Vercel AI SDK: createOpenAICompatible({ name: "svc", baseURL: "${origin}/v1", apiKey, supportsStructuredOutputs: true })
//   works with generateText({ tools, stopWhen: stepCountIs(2) }) and generateObject({ schema }).
// LangChain: new ChatOpenAI({ model: "${model}", apiKey, configuration: { baseURL: "${origin}/v1" } })
//   works with .bindTools([...]) and .withStructuredOutput(schema); .stream() is refused (400 stream_not_supported).`}
      />
    </>
  );
}

export function BillingAndHealthRules() {
  const floor = USAGE_TOLERANCE_FLOOR_TOKENS;
  const tolerance = `${USAGE_TOLERANCE_PERCENT}% or min(count, ${floor}) tokens, whichever is more`;
  return (
    <>
      <SubHeading id="billing-buyers">What you are billed for</SubHeading>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          The prompt you sent: messages, tool definitions and the response schema, counted by svc (o200k tokenizer, linear in the text),
          with each image at most <strong>{IMAGE_TOKENS} tokens</strong>. It is reserved first at an upper bound from its byte length and
          counted while the upstream works; text of more than {MAX_PROMPT_BYTES_PER_CONTEXT_TOKEN} bytes per token of the model&apos;s
          context is refused (400 <C>context_length_exceeded</C>) without counting.
        </li>
        <li>
          The reply you received: its content, refusal, visible reasoning and tool calls (tool calls only when your request sent{" "}
          <C>tools</C>), never more than the <C>max_tokens</C> forwarded. An empty reply (no content, refusal, reasoning or tool calls)
          bills no completion tokens.
        </li>
        <li>
          Hidden reasoning, only when you ask for it (<C>reasoning_effort</C> other than <C>none</C>, or the <C>reasoning</C> object) on a
          model whose catalog entry bills reasoning (<C>bills_reasoning</C>): the reasoning tokens the upstream reports, up to the lesser of
          your <strong>reasoning budget</strong> and what the answer makes plausible. The budget is <C>reasoning.max_tokens</C>, else{" "}
          <C>max_completion_tokens</C> (OpenAI&apos;s: answer and reasoning together), else a default by effort:{" "}
          {REASONING_EFFORTS.map((e) => `${e} ${defaultReasoningBudget(e)}`).join(", ")} tokens (one constant,{" "}
          {DEFAULT_REASONING_BUDGET_TOKENS} at medium: what reasoning models spend on an everyday question, far below their output caps; ask
          for more with <C>reasoning.max_tokens</C>). Plausible: up to the effort&apos;s default for any answer, or{" "}
          {REASONING_TOKENS_PER_ANSWER_TOKEN} reasoning tokens per token of the answer you received (its visible reasoning included) when
          that is more. The reservation covers your <C>max_tokens</C> (or the model&apos;s cap) plus the budget, within the model&apos;s
          cap, and that is the <C>max_tokens</C> forwarded. Otherwise reasoning you do not see is not billed. <C>usage.cost_details</C>{" "}
          shows the reasoning tokens claimed beside those billed.
        </li>
        <li>
          The <C>usage</C> in the answer is what you were billed, not what the upstream claimed.
        </li>
      </ul>

      <SubHeading id="billing-suppliers">What a supplier can and cannot be paid for</SubHeading>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          <strong>Can:</strong> the usage its upstream reports, when each side (prompt, completion) is within <strong>{tolerance}</strong>{" "}
          more than svc&apos;s own count (tokenizers and chat templates differ): up to twice a count below {floor} tokens, {floor} more up
          to {floor * 4}, {USAGE_TOLERANCE_PERCENT}% more beyond, and nothing over a count of 0. Without reported usage, svc&apos;s count.
          The reasoning tokens it reports, when the buyer asked for reasoning on a model that bills it, up to the budget and what the answer
          makes plausible.
        </li>
        <li>
          <strong>Cannot:</strong> a claim beyond that tolerance (that side is billed at svc&apos;s count, and the clear is recorded as a{" "}
          <strong>dispute</strong>); hidden reasoning the buyer did not ask for, or on a model that does not bill it, or beyond the
          buyer&apos;s budget or what the answer makes plausible; a system prompt the buyer did not send; completion tokens for an empty
          reply; tool calls the request did not offer tools for; output beyond <C>max_tokens</C>; more than {IMAGE_TOKENS} tokens per image;
          anything beyond the reservation; anything at all for a failed or refused request.
        </li>
        <li>
          A claim outside what the request allows (more prompt tokens than its byte length bounds, with the tolerance and{" "}
          {PROMPT_TEMPLATE_TOKENS} tokens for the upstream&apos;s own template and system prompt; more completion tokens than the{" "}
          <C>max_tokens</C> forwarded), and a reasoning claim beyond the budget or what the answer makes plausible, is a dispute billed at
          svc&apos;s count (reasoning at the bound) that also counts against the offer&apos;s health, like a failed answer. The buyer still
          gets the answer. Fidelity probes ask reasoning models for reasoning and flag an offer whose claims go beyond these bounds.
        </li>
        <li>
          Each offer&apos;s dispute rate over the last {DISPUTE_WINDOW_DAYS} UTC days is public: per price level in{" "}
          <C>GET /v1/market/book</C>, per model in <C>GET /v1/market/models</C>, and in the offer&apos;s <C>health.disputes</C> in{" "}
          <C>GET /v1/supply/offers</C>.
        </li>
      </ul>

      <SubHeading id="offer-health">What counts against an offer&apos;s health</SubHeading>
      <p>
        A buyer cannot push a competitor&apos;s offer off the book: an answer the request itself asks to be huge or slow is not the
        supplier&apos;s failure, and one buyer&apos;s failures alone do not cool an offer down that serves anyone else. Whatever the cause,
        the buyer of a failed request gets 502 <C>upstream_error</C> (its message says whether it counts) and pays nothing.
      </p>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          <strong>Does not count, because the request explains it:</strong> an answer over the {DEFAULT_MAX_RESPONSE_BYTES / 1024 / 1024}{" "}
          MiB limit when the request&apos;s worst case reaches it (the forwarded <C>max_tokens</C> × {TEXT_BYTES_PER_TOKEN} bytes a token,
          plus {LOGPROB_ENTRY_BYTES} bytes for each of 1 + <C>top_logprobs</C> entries a token when it asks for <C>logprobs</C>), or when it
          constrains the answer by a schema (tools the model may call, or a <C>json_schema</C> response format), whose <C>minItems</C> and{" "}
          <C>minLength</C> can ask for any size; and a timeout when the request&apos;s worst-case time reaches the deadline (its prompt at{" "}
          {PROMPT_TOKENS_PER_SECOND.toLocaleString("en-US")} tokens/s plus <C>max_tokens</C> at {OUTPUT_TOKENS_PER_SECOND} tokens/s, a slow
          but honest provider; without <C>max_tokens</C> the model&apos;s output cap is forwarded). Nor does a wait for one of svc&apos;s
          own connections to the upstream. Set <C>max_tokens</C> to what you need: a tight bound is served, and counts against a failing
          supplier.
        </li>
        <li>
          <strong>Does not count:</strong> an upstream 400, 413 or 422, which the request svc validated provoked. The buyer gets 400{" "}
          <C>upstream_rejected_request</C> with the upstream&apos;s message and pays nothing. svc never forwards more than it validated: a
          body that is not valid UTF-8 is refused (400 <C>invalid_json</C>), and one that would re-encode beyond the body limit is refused
          (413).
        </li>
        <li>
          <strong>Cools the offer down at once</strong> (no request can provoke it): no connection (refused, a host that does not resolve or
          is not allowed, nothing connected before the deadline), a 401 (the upstream refuses the supplier&apos;s key), and an upstream that
          is svc itself (a forwarding loop).
        </li>
        <li>
          <strong>Counts, weighed across buyers</strong> (the supplier&apos;s failure, but one a request might provoke): an upstream 5xx,
          402, 403, 404, 408, 429, an answer that is not a chat completion, a connection broken after the request went out, and an
          over-limit answer or a timeout the request does not explain. An offer&apos;s <strong>failure streak</strong> is its failures since
          it last served a completion (any completion served ends it, as does {STREAK_WINDOW_MS / 60_000} minutes without a failure after
          its last cooldown). The offer cools down when its streak holds failures from{" "}
          <strong>{DISTINCT_BUYERS_TO_COOL} distinct buyer accounts</strong>, or{" "}
          <strong>
            {LONE_STREAK_FAILURES} failures over at least {LONE_STREAK_MS / 1000} s
          </strong>{" "}
          (it served no one for that long while every request failed: this protects the only buyer of a model from a dead upstream, and with
          anyone else served meanwhile, their completion would have ended the streak). A buyer whose requests an offer fails while serving
          others keeps getting 502s from it, paying nothing; the offer stays on the book for everyone else.
        </li>
        <li>
          The n-th cooldown of a streak lasts {BASE_COOLDOWN_MS / 1000} s × 2<sup>n−1</sup>, up to {MAX_COOLDOWN_MS / 60_000} minutes. After
          a cooldown the next request probes the offer: a completion ends the streak, a failure starts the next, longer cooldown. Requests
          that were in flight and fail during a cooldown count in the streak but do not lengthen it.
        </li>
        <li>
          Every forwarded request carries <C>X-Svc-Hop: 1</C>; svc refuses chat requests carrying it (508 <C>loop_detected</C>), so an offer
          pointed back at svc fails at the first hop instead of nesting clears.
        </li>
      </ul>
    </>
  );
}
