import Link from "next/link";
import { C, CodeBlock } from "@/components/docs/code-block";
import { SubHeading } from "@/components/docs/doc-section";
import type { DeploymentFacts } from "@/components/docs/guides";

/** /docs/streaming: the v2 surface, quick starts with the clients people stream with, and what each ending bills. */
export function StreamingGuide({ facts }: { facts: DeploymentFacts }) {
  const { origin, exampleModel: model } = facts;
  const base = `${origin}/v2`;
  return (
    <>
      <p>
        <C>/v2</C> is the same API as <C>/v1</C> (the same keys, routing, max price, budgets, reservation and single clear) with streaming:{" "}
        <C>POST /v2/chat/completions</C> and <C>POST /v2/responses</C> take <C>stream: true</C>. Point a client&apos;s base URL at{" "}
        <C>{base}</C>; <C>/v2/models</C>, <C>/v2/key</C> and <C>/v2/generations/{"{id}"}</C> are there too. Without <C>stream: true</C> a v2
        request is answered exactly as v1 answers it; v1 keeps refusing <C>stream: true</C> (400 <C>stream_not_supported</C>).
      </p>

      <SubHeading id="streaming-quick-start">Quick start</SubHeading>
      <CodeBlock
        title="curl"
        language="bash"
        code={`curl -N ${base}/chat/completions \\
  -H "Authorization: Bearer $SVC_API_KEY" -H "Content-Type: application/json" \\
  -d '{"model":"${model}","messages":[{"role":"user","content":"Hello"}],"max_tokens":100,"stream":true}'`}
      />
      <CodeBlock
        title="openai (TypeScript)"
        language="ts"
        code={`import OpenAI from "openai";
const client = new OpenAI({ baseURL: "${base}", apiKey: process.env.SVC_API_KEY });
const stream = await client.chat.completions.create({
  model: "${model}", messages: [{ role: "user", content: "Hello" }], max_tokens: 100, stream: true,
});
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta.content ?? "");`}
      />
      <CodeBlock
        title="Vercel AI SDK"
        language="ts"
        code={`import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { streamText } from "ai";
const svc = createOpenAICompatible({ name: "svc", baseURL: "${base}", apiKey: process.env.SVC_API_KEY, includeUsage: true });
const result = streamText({ model: svc("${model}"), prompt: "Hello", maxOutputTokens: 100 });
for await (const text of result.textStream) process.stdout.write(text);`}
      />
      <CodeBlock
        title="A coding agent (opencode's opencode.json; Codex CLI and others take the same base URL and key)"
        language="json"
        code={`{
  "provider": {
    "svc": {
      "npm": "@ai-sdk/openai-compatible",
      "options": { "baseURL": "${base}", "apiKey": "{env:SVC_API_KEY}" },
      "models": { "${model}": {} }
    }
  }
}`}
      />

      <SubHeading id="streaming-wire">What the stream carries</SubHeading>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          The headers go out as soon as the request is reserved: <C>X-Svc-Generation-Id</C>, <C>X-Svc-Price-Cents</C>,{" "}
          <C>X-Svc-Max-Cents</C>, <C>X-Svc-Reserved</C> (the most it can cost) and <C>X-Svc-Max-Burn-Diem</C>. Anything refused is refused
          before that, with the usual JSON error and status (402, 429, 503…), never a half-open stream.
        </li>
        <li>
          Chat: OpenAI&apos;s <C>chat.completion.chunk</C> events (role, content, <C>reasoning_content</C>, tool-call deltas with index, id,
          name and arguments, finish_reason), then one chunk with no choices and the <C>usage</C> (with <C>cost</C>, <C>cost_details</C> and{" "}
          <C>balance_remaining</C>, sent whether or not you set <C>stream_options.include_usage</C>, as OpenRouter does), then{" "}
          <C>data: [DONE]</C>.
        </li>
        <li>
          Responses: OpenAI&apos;s events, each with <C>sequence_number</C>: <C>response.created</C>, <C>response.in_progress</C>, each
          item&apos;s <C>response.output_item.added</C> before its deltas, the deltas and their <C>.done</C> events, then exactly one of{" "}
          <C>response.completed</C>, <C>response.incomplete</C> or <C>response.failed</C>, whose response carries the usage and its cost.
        </li>
        <li>
          While the upstream is silent (a slow first token) svc sends a comment line (<C>: keep-alive</C>) every 4 s, so proxies and clients
          keep the connection.
        </li>
        <li>An upstream that cannot stream is asked without streaming and its answer is sent to you as a valid stream.</li>
      </ul>

      <SubHeading id="streaming-money">What each ending bills (one clear each)</SubHeading>
      <p>
        The worst case is reserved before the upstream is asked, as for any request, and the stream clears exactly once when it ends. The
        generation record (<C>GET /v2/generations/{"{id}"}</C>) says how it ended:
      </p>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          <strong>completed</strong>: the upstream&apos;s final usage, checked against svc&apos;s own count of the text it relayed (the
          tolerance rule of <Link href="/docs/billing">billing</Link>); no usage from the upstream: svc&apos;s count.
        </li>
        <li>
          <strong>client_cancelled</strong>: you hung up (or read nothing for a while with svc&apos;s buffer for you full). svc closes the
          upstream request, so the supplier&apos;s engine stops, and bills the prompt plus the completion tokens that had arrived, by its
          own count: never $0 once content arrived, never more than was generated.
        </li>
        <li>
          <strong>upstream_error</strong>: the upstream failed mid-stream. You get an error event (chat: <C>{'data: {"error": …}'}</C> and
          no <C>[DONE]</C>; responses: <C>response.failed</C> with the usage) and pay for what you received, by svc&apos;s count; nothing
          received, nothing billed. It counts against the offer&apos;s health like a failed answer.
        </li>
        <li>
          <strong>timeout</strong>: the upstream went silent too long (counted against the offer), or the stream reached its longest life or
          the server&apos;s drain deadline (svc&apos;s own limits): billed as an upstream error is.
        </li>
      </ul>
      <p>
        A key may hold a bounded number of open streams at once (and an account too); beyond it a new stream gets 429 <C>rate_limited</C>{" "}
        with <C>Retry-After</C>.
      </p>
    </>
  );
}
