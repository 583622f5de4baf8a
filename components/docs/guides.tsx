/** The docs' prose: quick starts, the x402 top-up, and how the router prices and reserves. Numbers come from the deployment. */
import { C, CodeBlock } from "@/components/docs/code-block";
import { SubHeading } from "@/components/docs/doc-section";
import { formatBps } from "@/components/ui/format";
import { NameTable } from "@/components/docs/name-table";

export type DeploymentFacts = {
  origin: string;
  feeBps: number;
  defaultMaxCents: number;
  topUpMin: string;
  topUpMax: string;
  /** A model to use in examples. */
  exampleModel: string;
};

export function QuickStart({ facts }: { facts: DeploymentFacts }) {
  const { origin, exampleModel: model } = facts;
  return (
    <>
      <SubHeading id="quick-start-humans">For humans: the web app</SubHeading>
      <ol className="ml-5 list-decimal space-y-1">
        <li>
          Open{" "}
          <a className="text-emerald-700 underline underline-offset-2 hover:no-underline dark:text-emerald-400" href="/dashboard">
            the dashboard
          </a>
          , connect a wallet on Base and sign the sign-in message (no transaction, no gas).
        </li>
        <li>Top up: your wallet signs a USDC authorization for exactly the amount; the service settles it on chain and credits you.</li>
        <li>Create an API key (shown once), optionally with a max price and a spend limit, for good or reset daily, weekly or monthly.</li>
        <li>
          Point any OpenAI SDK at <C>{origin}/v1</C> with that key.
        </li>
      </ol>

      <SubHeading id="quick-start-agents">For agents: the CLI</SubHeading>
      <p>
        The repository ships a headless client that does the whole agent flow (sign in → top up → key → chat) with a private key. Against{" "}
        <C>npm run dev</C> it needs no configuration: it signs with anvil's first dev key (a public test key), funded with test USDC.
      </p>
      <CodeBlock
        title="Terminal"
        language="sh"
        code={`npm install && npm run dev          # the whole marketplace locally (another terminal)
npm run agent -- run                # login → top up if low → the saved key (or a new one, 1 USDC a day) → one chat → its cost

# step by step, against any deployment (https), with your own key:
export SVC_BASE_URL=${origin} SVC_AGENT_PRIVATE_KEY=0x…
npm run agent -- login
npm run agent -- topup 5
npm run agent -- keys create --name my-agent --max-cents 90 --spend-limit 2
npm run agent -- chat "Hello" --model ${model} --max-tokens 200   # the answer, its cost and generation id
npm run agent -- generation chatcmpl-…   # that completion's record: supplier, tokens, charge, share, fee
npm run agent -- balance --json     # every command has --json
# exit codes by class: 2 usage or a 400, 3 auth, 4 payment (402), 5 unavailable (503, 429, 502): retry later`}
      />

      <SubHeading id="quick-start-curl">With curl</SubHeading>
      <p>
        Sign-in needs a wallet signature over the message built from the nonce answer (any EIP-4361 library, e.g. viem&apos;s{" "}
        <C>createSiweMessage</C>); everything else is plain HTTP.
      </p>
      <CodeBlock
        title="Headless flow"
        language="sh"
        code={`BASE=${origin}
# 1. nonce and the other fields of the EIP-4361 message (domain, uri, chain_id 8453, statement, issued_at, expiration_time)
curl "$BASE/auth/nonce?walletAddress=0xYourChecksummedAddress"
# 2. sign the message with the wallet, then trade it for the svc_session cookie
curl -c jar.txt "$BASE/auth/verify" -H 'content-type: application/json' \\
  -d '{"message":"<the message you signed>","signature":"0x…"}'
# 3. top up: answers 402 + PAYMENT-REQUIRED; sign EIP-3009 and retry with PAYMENT-SIGNATURE (see "Top up with x402")
curl -i -b jar.txt "$BASE/v1/x402/top-up" -H 'content-type: application/json' -d '{"amount":"5.00"}'
# 4. an API key (the "key" field is shown only here)
curl -b jar.txt "$BASE/v1/account/api-keys" -H 'content-type: application/json' -d '{"name":"agent","max_price_cents":100}'
# 5. a completion: usage.cost and usage.cost_details say what it cost; -i shows X-Svc-Generation-Id, X-Svc-Cost, X-Balance-Remaining
#    (later: curl "$BASE/v1/generations/<its id>" -H "Authorization: Bearer $SVC_API_KEY")
curl -i "$BASE/v1/chat/completions" -H "Authorization: Bearer $SVC_API_KEY" -H 'content-type: application/json' \\
  -d '{"model":"${model}","messages":[{"role":"user","content":"Hello"}],"max_tokens":200}'`}
      />

      <SubHeading id="quick-start-sdk">With the OpenAI SDK</SubHeading>
      <div className="flex flex-col gap-3">
        <CodeBlock
          title="Node.js (openai)"
          language="ts"
          code={`import OpenAI from "openai";

const client = new OpenAI({
  baseURL: "${origin}/v1",
  apiKey: process.env.SVC_API_KEY, // svc_…
  maxRetries: 0, // one call = one routed request
});

const { data, response } = await client.chat.completions
  .create(
    { model: "${model}", messages: [{ role: "user", content: "Hello" }], max_tokens: 200 },
    { headers: { "X-Svc-Max-Cents": "90" } }, // optional
  )
  .withResponse();

console.log(data.choices[0].message.content);
// usage.cost (USD) and usage.cost_details are svc's additions: read them off the raw usage object
const usage = data.usage as OpenAI.CompletionUsage & { cost: number; cost_details: { charge: string } };
console.log(usage.cost, usage.cost_details.charge, response.headers.get("x-svc-generation-id"), response.headers.get("x-balance-remaining"));`}
        />
        <CodeBlock
          title="Python (openai)"
          language="py"
          code={`import os
from openai import OpenAI

client = OpenAI(base_url="${origin}/v1", api_key=os.environ["SVC_API_KEY"], max_retries=0)

raw = client.chat.completions.with_raw_response.create(
    model="${model}",
    messages=[{"role": "user", "content": "Hello"}],
    max_tokens=200,
    extra_headers={"X-Svc-Max-Cents": "90"},  # optional
)
reply = raw.parse()
print(reply.choices[0].message.content)
print(reply.usage.cost, reply.usage.cost_details["charge"])  # svc's additions to usage (extra fields of the model)
print(raw.headers["x-svc-generation-id"], raw.headers["x-balance-remaining"])`}
        />
      </div>
      <p>
        Streaming is not offered in v1: <C>stream: true</C> answers 400 <C>stream_not_supported</C>. The SDK&apos;s own retries are best
        off: a retry is a new request that may route to another offer.
      </p>

      <SubHeading id="quick-start-responses">With the Responses API (agents&apos; frameworks)</SubHeading>
      <p>
        <C>POST /v1/responses</C> serves the stateless part of OpenAI&apos;s Responses API, which the OpenAI Agents SDK uses by default and
        LangChain (<C>useResponsesApi: true</C>) and the Vercel AI SDK (<C>openai.responses(model)</C>) offer. Each response is one chat
        completion underneath: the same routing, max price, key limits, reservation and charge, <C>usage.cost</C> and{" "}
        <C>usage.cost_details</C>, and one clear. Send the whole conversation in <C>input</C> every time (messages with <C>input_text</C>{" "}
        and <C>input_image</C> parts, the <C>function_call</C> items an answer gave you and your <C>function_call_output</C> items): svc
        stores nothing, so <C>store: true</C> is answered with <C>store: false</C>, and <C>previous_response_id</C>, <C>background</C> and
        built-in tools (web search, file search, computer use) are refused with a 400 naming the field, before anything is reserved.
      </p>
      <div className="flex flex-col gap-3">
        <CodeBlock
          title="Node.js (openai)"
          language="ts"
          code={`import OpenAI from "openai";

const client = new OpenAI({ baseURL: "${origin}/v1", apiKey: process.env.SVC_API_KEY, maxRetries: 0 });
const parameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
const tools = [{ type: "function" as const, name: "get_weather", parameters, strict: true }];
const input: OpenAI.Responses.ResponseInput = [{ role: "user", content: "What is the weather in Paris?" }];

const first = await client.responses.create({ model: "${model}", input, tools, max_output_tokens: 200 });
const call = first.output.find((item) => item.type === "function_call");
if (call) {
  // Send the whole exchange back: svc stores nothing between requests.
  input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]));
  input.push({ type: "function_call_output", call_id: call.call_id, output: '{"temperature":21}' });
  const second = await client.responses.create({ model: "${model}", input, tools, max_output_tokens: 200 });
  console.log(second.output_text, second.status); // "incomplete" when it stopped at max_output_tokens
}`}
        />
        <CodeBlock
          title="OpenAI Agents SDK (@openai/agents)"
          language="ts"
          code={`import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from "@openai/agents";
import { z } from "zod";

setTracingDisabled(true); // traces go to OpenAI, not to svc
const provider = new OpenAIProvider({ baseURL: "${origin}/v1", apiKey: process.env.SVC_API_KEY, useResponses: true });
const runner = new Runner({ modelProvider: provider });
const weather = tool({
  name: "get_weather",
  description: "Weather in a city",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => \`sunny in \${city}\`,
});
const agent = new Agent({ name: "Weather", instructions: "Answer with the weather.", model: "${model}", tools: [weather] });
console.log((await runner.run(agent, "What is the weather in Paris?")).finalOutput);`}
        />
      </div>
      <p>
        The answer&apos;s <C>id</C> is <C>resp_…</C>; <C>X-Svc-Generation-Id</C> is its completion&apos;s id (<C>chatcmpl-</C> and the same
        random part). Either finds it: <C>GET /v1/generations/{"{id}"}</C> and <C>GET /v1/account/usage?id=</C> take both, and the
        generation record, the usage list, the dashboard and the ledger CSV show it under the <C>resp_…</C> id you were given. From the CLI:{" "}
        <C>npm run agent -- chat &quot;Hello&quot; --responses</C>.
      </p>
    </>
  );
}

export function TopUpGuide({ facts }: { facts: DeploymentFacts }) {
  return (
    <>
      <ol className="ml-5 list-decimal space-y-1">
        <li>
          <C>POST /v1/x402/top-up</C> with <C>{'{"amount":"10.00"}'}</C> (USD, {facts.topUpMin} to {facts.topUpMax}) and your session
          cookie.
        </li>
        <li>
          It answers <strong>402</strong> with an x402 v2 <C>PAYMENT-REQUIRED</C> header (and the v1 body with <C>accepts</C>): scheme{" "}
          <C>exact</C>, network <C>eip155:8453</C>, asset USDC, <C>payTo</C> the treasury, exactly the amount, and <C>extra.payer</C>: your
          signed-in wallet.
        </li>
        <li>
          That wallet signs an EIP-3009 <C>transferWithAuthorization</C> for it (a signature, no transaction, no gas). Only the signed-in
          wallet can pay: an authorization whose <C>from</C> is any other address is refused (402 <C>payment_invalid</C>, reason{" "}
          <C>payer_mismatch</C>), and the payload must be exactly EIP-3009&apos;s <C>{"{signature, authorization}"}</C> (any other field,
          e.g. a Permit2 authorization, is refused).
        </li>
        <li>
          Retry the same request with <C>PAYMENT-SIGNATURE</C> (v1: <C>X-PAYMENT</C>). The service verifies it, settles it on chain (its
          relayer pays the gas), credits you in the same database transaction that records the settlement, and answers 200{" "}
          <C>{'{"credited","balance","transaction"}'}</C> with <C>PAYMENT-RESPONSE</C>. A replayed authorization is refused (409); a
          transfer sent but not yet confirmed (502 <C>payment_pending</C>) is credited automatically later: do not sign again.
        </li>
        <li>
          Lost the answer (the connection dropped after the signed retry was sent)? Ask instead of paying again:{" "}
          <C>GET /v1/x402/top-up/{"{nonce}"}</C> with the authorization&apos;s nonce answers <C>credited</C>, <C>pending</C> (svc has it; do
          not sign again), <C>failed</C> (nothing charged) or <C>not_received</C>, which is final once its <C>checked_at</C> is past the
          authorization&apos;s <C>validBefore</C>.
        </li>
      </ol>
      <CodeBlock
        title="Any x402 client does steps 2-4, e.g. @x402/fetch"
        language="ts"
        code={`import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";

// The client refuses payments above $1 unless told otherwise: allow the amount you mean to pay.
const client = new x402Client().setSpendControls({ maxAmountPerPayment: "$10.00" });
registerExactEvmScheme(client, { signer: privateKeyToAccount(process.env.SVC_AGENT_PRIVATE_KEY) });
const pay = wrapFetchWithPayment(fetch, client);
// Your session: the Set-Cookie of POST /auth/verify after signing in (steps above), e.g. "svc_session=…".
const svcSessionCookie = process.env.SVC_SESSION_COOKIE;

const res = await pay("${facts.origin}/v1/x402/top-up", {
  method: "POST",
  headers: { "content-type": "application/json", cookie: svcSessionCookie },
  body: JSON.stringify({ amount: "10.00" }),
}); // 402 → sign → retry, in one call
console.log(await res.json()); // { credited: "10.000000", balance: "…", transaction: "0x…" }`}
      />
    </>
  );
}

export function PricingGuide({ facts }: { facts: DeploymentFacts }) {
  return (
    <>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          <strong>Diem</strong> is capacity: 1 diem = $1 of list-price inference per day. Each model has a list price in diem per 1M tokens,
          input and output (<C>GET /v1/models</C>).
        </li>
        <li>
          A completion <strong>burns</strong> prompt_tokens × input price + completion_tokens × output price, in diem.
        </li>
        <li>
          Suppliers post offers in <strong>cents per diem</strong> (100 = list price, 80 = 20% below it). A completion on an offer at P
          cents costs <C>ceil(burn × P / 100)</C> USDC.
        </li>
        <li>
          The supplier earns {formatBps(10_000 - facts.feeBps)} of that; the platform keeps <strong>{formatBps(facts.feeBps)}</strong>.
        </li>
        <li>
          The router picks the <strong>cheapest eligible offer at or below your max price</strong> (ties: the earliest posted), forwards
          once, and clears once. If the upstream fails you get 502 <C>upstream_error</C> and pay nothing; it is not retried for you.
        </li>
      </ul>

      <SubHeading id="max-price">Your max price</SubHeading>
      <p>The first of these that is set wins:</p>
      <ol className="ml-5 list-decimal space-y-1">
        <li>
          the request header <C>X-Svc-Max-Cents</C> (1-10000). Above the key&apos;s own cap it is refused: 400{" "}
          <C>max_price_above_key_cap</C>;
        </li>
        <li>
          the API key&apos;s <C>max_price_cents</C>;
        </li>
        <li>
          the account&apos;s default (<C>PATCH /v1/account</C> <C>{'{"default_max_price_cents":90}'}</C>);
        </li>
        <li>the platform default: {facts.defaultMaxCents} cents per diem.</li>
      </ol>

      <SubHeading id="reservation">The worst-case reservation</SubHeading>
      <p>
        Before forwarding, the router reserves the most the request can cost: the prompt (at its byte-length bound, or counted, plus the
        usage tolerance) plus <C>max_tokens</C> (or the model&apos;s output cap when you send none), at the chosen offer&apos;s price, from
        your balance and from the offer&apos;s capacity. When you ask for reasoning on a model that bills it, the output reserved (and
        forwarded as <C>max_tokens</C>) is that plus the reasoning budget (<C>reasoning.max_tokens</C>, else a default by effort), within
        the model&apos;s cap; <C>max_completion_tokens</C>, when you send it, is the whole. After the answer it charges the actual usage and
        releases the rest. If your available balance cannot cover the reservation you get 402 <C>insufficient_balance</C> with <C>needed</C>{" "}
        and <C>available</C>: <C>needed_is</C> says whether <C>needed</C> is the reservation (<C>reservation</C>, at the offer&apos;s{" "}
        <C>price_cents</C>) or, when even that is out of reach, the least the request can cost (<C>minimum</C>); a key spend limit likewise
        gives 402 <C>spend_limit_exceeded</C>.{" "}
        <strong>
          Send a <C>max_tokens</C> you actually need
        </strong>{" "}
        to reserve less.
      </p>

      <SubHeading id="cost">What a call cost, then and later</SubHeading>
      <p>
        Every 200 states its cost in the body, as OpenRouter&apos;s clients read it: <C>usage.cost</C> is the charge in USD as a JSON
        number, and <C>usage.cost_details</C> has the exact figures as decimal strings, the very lines of that completion&apos;s journal
        entry: <C>charge</C> (what you paid; also <C>X-Svc-Cost</C>), <C>supplier_share</C> and <C>platform_fee</C> (they add up to the
        charge), <C>burn</C> (diem) and <C>price_cents_per_diem</C> (the offer&apos;s price), and the tokens: <C>billed_prompt_tokens</C>/
        <C>billed_completion_tokens</C> beside the upstream&apos;s <C>claimed_prompt_tokens</C>/<C>claimed_completion_tokens</C> (null when
        it reported none: <C>usage_estimated</C>, svc counted), <C>billed_reasoning_tokens</C> beside the upstream&apos;s{" "}
        <C>claimed_reasoning_tokens</C> (within the completion tokens; null when it reported no reasoning), and <C>usage_disputed</C> when
        the claim went beyond the tolerance of svc&apos;s own count, or its reasoning beyond the bound, and svc&apos;s count (or the bound)
        was billed instead. svc&apos;s own count stands beside them: <C>counted_prompt_tokens</C>, <C>counted_completion_tokens</C> (the
        billable reply, within the <C>max_tokens</C> forwarded) and <C>reasoning_tokens_bound</C> (hidden reasoning cannot be counted, only
        bounded: the most svc accepts for that answer; null when reasoning is not billed). Use the exact strings for accounting; the number
        can round.
      </p>
      <p>
        The answer&apos;s <C>id</C> (also the header <C>X-Svc-Generation-Id</C>) finds its record later: <C>GET /v1/generations/{"{id}"}</C>{" "}
        with any live API key of your account (or signed in, from the dashboard) returns the model, the offer and the supplier&apos;s public
        id (<C>sup_…</C>, a pseudonym: never a wallet) and display name that served it, the same <C>usage</C> and <C>cost_details</C>,{" "}
        <C>finish_reason</C>, the upstream&apos;s latency and the total, the key that made it and the journal entry id. Another
        account&apos;s id answers 404, as an unknown one does; a malformed one 400.
      </p>
      <SubHeading id="prompt-caching">Prompt caching</SubHeading>
      <p>
        Agents resend their whole context every turn. A model with a <strong>cache-read price</strong> (<C>GET /v1/models</C>:{" "}
        <C>pricing.cache_read_diem_per_mtok</C>, and OpenRouter&apos;s <C>pricing.input_cache_read</C> in USD per token) bills the prompt
        tokens its supplier&apos;s cache served at that price, on offers that declare <C>prompt_caching.caches_prompts</C> (their upstream
        caches prompt prefixes, and keeps one at least <C>retention_seconds</C> after it was last sent). You send nothing special: no{" "}
        <C>cache_control</C>, no key.
      </p>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          <strong>Verified, not taken on trust.</strong> svc records the prompt prefixes it sends each caching offer. The cached tokens
          billed are the larger of what the upstream reports (<C>prompt_tokens_details.cached_tokens</C>) and svc&apos;s own count of the
          prefix your account sent that offer within its retention, never more than the prompt: a supplier cannot bill a prefix it was just
          given as new (svc counts only your own prefixes: it never tells you what another buyer sent). svc&apos;s prefixes end at a message
          end, the first past each 4,096 characters of text (about 1,024 tokens, the least OpenAI and Anthropic cache): a prompt shorter
          than that is never cached by svc&apos;s count, only by the upstream&apos;s report.
        </li>
        <li>
          <strong>Where it shows.</strong> <C>usage.prompt_tokens_details.cached_tokens</C> (in a stream&apos;s usage chunk too, and{" "}
          <C>input_tokens_details.cached_tokens</C> on the Responses API), <C>cost_details.billed_cached_tokens</C> beside the
          upstream&apos;s <C>claimed_cached_tokens</C>, the generation record and your usage in the dashboard. On an offer that does not
          declare caching nothing is billed at the cache price (<C>billed_cached_tokens</C> is null) and the upstream&apos;s report is
          passed on as it is.
        </li>
        <li>
          <strong>The reservation</strong> still holds every prompt token at the input price (the worst case); the charge is then computed
          with the cached ones at the cache price. A cache-write price, where a model lists one, is published but not billed: a prompt token
          never costs more than the input price.
        </li>
        <li>
          <strong>Routing keeps your session where its cache is.</strong> When svc sent this request&apos;s prefix to a caching offer within
          its retention, offers are ordered by their effective price for this request (the cached part at the cache-read price, at each
          offer&apos;s price): that offer keeps the session while it is the cheapest that way, even when another posts a lower price per
          diem. <C>provider.sort: &quot;price&quot;</C> (the default) compares these effective prices.{" "}
          <C>{'"provider": {"cache_affinity": false}'}</C> routes by posted price alone.
        </li>
      </ul>
      <SubHeading id="key-budgets">Key budgets that reset</SubHeading>
      <p>
        A key&apos;s <C>spend_limit</C> is for the key&apos;s whole life unless you give it a <C>limit_reset</C>: <C>daily</C> (from 00:00
        UTC), <C>weekly</C> (from Monday 00:00 UTC, weeks Monday to Sunday) or <C>monthly</C> (from the 1st, 00:00 UTC). Set it when
        creating the key (<C>POST /v1/account/api-keys</C>) or later (<C>PATCH /v1/account/api-keys/{"{id}"}</C>, <C>null</C> for a lifetime
        limit again), in the dashboard, or with the CLI&apos;s <C>--limit-reset</C>. The limit is held like the balance: each request
        reserves its worst case against the current period before it is forwarded, in one conditional update, so no number of concurrent
        requests on any number of servers spends past it.
      </p>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          <strong>A request in flight at the reset counts against the period it was reserved in.</strong> Its charge stays there, and the
          part of its reservation it did not use is given back to that period only; the new period starts at 0.
        </li>
        <li>
          A limit lowered below what the period has already spent is accepted: the key then gets 402 <C>spend_limit_exceeded</C> until the
          reset (the error says when) or until you raise it.
        </li>
        <li>
          Changing <C>limit_reset</C> counts the new current period from the ledger: what the key&apos;s requests reserved since it began.
        </li>
      </ul>
      <p>
        The key can describe itself: <C>GET /v1/key</C> with the key as Bearer answers its <C>limit</C>, <C>limit_remaining</C> (requests in
        flight included), <C>limit_reset</C>, <C>limit_resets_at</C>, its <C>usage</C> in total and <C>usage_daily</C>, <C>usage_weekly</C>,{" "}
        <C>usage_monthly</C> (UTC, from its clears), its max price, expiry and rate limit, inside <C>{'{"object":"key","data":{…}}'}</C>:
        OpenRouter&apos;s field names for its key endpoint, with money as USDC strings.
      </p>
      <p>
        When an agent stops, ask why: <C>GET /v1/account/usage/refusals</C> lists the requests each key was refused in the last <C>hours</C>{" "}
        (402 for the balance or the key&apos;s limit, 429 for the rate and stream limits, 503 when no offer could serve it), counted per key
        by reason with the latest message, beside the served requests of <C>GET /v1/account/usage</C>. The key itself can read its own
        (Bearer); the dashboard&apos;s Usage page shows every key&apos;s.
      </p>
      <CodeBlock
        title="A daily budget, and what the key sees"
        language="sh"
        code={`curl -b jar.txt "${facts.origin}/v1/account/api-keys" -H 'content-type: application/json' \\
  -d '{"name":"agent","spend_limit":"5.00","limit_reset":"daily"}'
curl "${facts.origin}/v1/key" -H "Authorization: Bearer $SVC_API_KEY"`}
      />

      <SubHeading id="no-offer">When nothing routes: 503</SubHeading>
      <NameTable
        caption="Headers of a 503 from chat completions"
        name="Header"
        rows={[
          [
            "X-Svc-Error-Code",
            "no_offer_at_or_below_max (nothing posted at or below your max), no_capacity (not enough left today for this request's worst case), no_healthy_supplier (those offers are cooling down after failures), no_offer_supports_tools / _json_schema / _vision (no offer serves a feature the request uses), no_offer_passing_probes (those offers are off the book after a failed fidelity probe), no_offer_fits_request (the offers declare a smaller context or output cap than the request's worst case), no_offer_matches_provider_only / _ignore / _quantizations / _data_collection / _max_price (your provider preferences leave no offer; see Provider preferences)",
          ],
          ["X-Svc-Buyer-Max-Cents", "the max price this request had"],
          ["X-Svc-Cheapest-Posted-Cents", "the cheapest active offer for the model (empty: nobody offers it)"],
          ["X-Svc-Routable-Diem-Above-Max", "capacity available today above your max, in diem"],
        ]}
      />
      <p>
        The body adds <C>suggested_max_cents</C>: the lowest max price that would route the request now. On success the answer carries{" "}
        <C>X-Svc-Generation-Id</C>, <C>X-Svc-Cost</C>, <C>X-Svc-Price-Cents</C>, <C>X-Svc-Burn-Diem</C>, <C>X-Svc-Max-Cents</C> and{" "}
        <C>X-Balance-Remaining</C>; every answer of the endpoint carries <C>X-RateLimit-Limit</C>/<C>-Remaining</C>/<C>-Reset</C> (429 adds{" "}
        <C>Retry-After</C>), and every answer of the API an <C>X-Request-Id</C>.
      </p>
      <p>
        Connections (the defaults; an operator may change them): a kept-alive connection is closed after 5 s idle (announced as{" "}
        <C>Keep-Alive: timeout=5</C>), one that sends no complete request headers within 10 s and a request whose body takes more than 30 s
        are closed (408), pipelined requests are answered one at a time with at most 16 waiting (more close the connection), and one address
        may hold 256 open connections (more are answered 429 and closed). A request target must be a path: <C>*</C> and absolute URLs get
        400.
      </p>
    </>
  );
}
