/** The docs for suppliers: putting an upstream on the market, what each declaration means, and posting an offer. */
import Link from "next/link";
import { C, CodeBlock } from "@/components/docs/code-block";
import { SubHeading } from "@/components/docs/doc-section";
import type { DeploymentFacts } from "@/components/docs/guides";
import { NameTable } from "@/components/docs/name-table";
import { formatBps } from "@/components/ui/format";

/** Common upstream kinds: how each is started or found, its base URL and what `upstream_model` is there. */
const UPSTREAMS: { id: string; title: string; run: string; base: string; model: string; notes: string }[] = [
  {
    id: "vllm",
    title: "vLLM",
    run: `vllm serve meta-llama/Llama-3.3-70B-Instruct --served-model-name llama-3.3-70b \\
  --api-key "$UPSTREAM_API_KEY" --port 8000 --quantization fp8`,
    base: "https://your-host/v1 (TLS in front of port 8000)",
    model: "the --served-model-name (else the Hugging Face id)",
    notes: "Streams, and stops generating (and billing) when its client hangs up. Forwards top_k, min_p and repetition_penalty.",
  },
  {
    id: "llama-cpp",
    title: "llama.cpp server",
    run: `llama-server -m Llama-3.3-70B-Instruct-Q4_K_M.gguf --alias llama-3.3-70b \\
  --api-key "$UPSTREAM_API_KEY" --port 8080 --ctx-size 32768 --jinja`,
    base: "https://your-host/v1 (TLS in front of port 8080)",
    model: "the --alias",
    notes:
      "Declare quantization int4 for a Q4 file and context_tokens as its --ctx-size (per slot: the context divided by --parallel). --jinja lets it use tools.",
  },
  {
    id: "ollama",
    title: "Ollama",
    run: `OLLAMA_HOST=0.0.0.0:11434 ollama serve
ollama pull llama3.3:70b`,
    base: "https://your-host/v1 (TLS and a key check in front of port 11434)",
    model: "the tag, e.g. llama3.3:70b",
    notes:
      "Ollama checks no key: svc still needs one to store (any text), so put a proxy that checks a key in front of it before you expose it. Its OpenAI endpoint streams; declare its num_ctx as context_tokens.",
  },
  {
    id: "venice",
    title: "Venice (hosted)",
    run: "# nothing to run: an API key from venice.ai",
    base: "https://api.venice.ai/api/v1",
    model: "Venice's model id, e.g. llama-3.3-70b",
    notes: "Venice bills in diem, as svc counts capacity: daily_capacity is the diem your key may spend a day. It keeps no prompts.",
  },
  {
    id: "openrouter",
    title: "OpenRouter (hosted)",
    run: "# nothing to run: an API key from openrouter.ai",
    base: "https://openrouter.ai/api/v1",
    model: "OpenRouter's id, e.g. meta-llama/llama-3.3-70b-instruct",
    notes:
      "OpenRouter routes among its own providers: its data policy is theirs (set its provider.data_collection on your OpenRouter key to deny, or declare retains_prompts true).",
  },
];

const DECLARATIONS: [string, string][] = [
  [
    "models",
    'The catalog ids the offer sells, each as a string (the upstream knows it by the same name) or {"id", "upstream_model"}: svc sends upstream_model in the request\'s model field.',
  ],
  ["price_cents", "What a buyer pays per diem of capacity burned, in cents (100 = the list price; 1 to 10000)."],
  [
    "daily_capacity",
    "Diem the offer sells per UTC day: a request is reserved against what is left today, so the offer is never sold beyond it.",
  ],
  [
    "quantization",
    "fp16, bf16, fp8, int8, int4 or unknown: the numeric format the upstream serves. Buyers filter on it (provider.quantizations).",
  ],
  [
    "data_policy",
    '{"retains_prompts", "trains_on_prompts"}, both required when given. An offer that has not said is shown retaining and training, and buyers who send provider.data_collection "deny" never reach it.',
  ],
  [
    "context_tokens, max_output_tokens",
    "Limits below the model's own that the upstream serves (its --max-model-len or --ctx-size): svc never sends it a request that could not fit.",
  ],
  [
    "streaming.streams",
    "false when the upstream cannot stream: svc asks it without streaming and sends the answer to a streaming buyer as a stream. Default true.",
  ],
  [
    "streaming.bills_cancelled_in_full",
    "true when the upstream bills a whole answer even if its client hangs up (most hosted APIs): svc then reads a cancelled stream to its end and bills what was generated, instead of only what had arrived. Buyers who send provider.cancelled_billing deny avoid such offers. Default false (vLLM, llama.cpp and Ollama stop when the client goes).",
  ],
];

export function SupplierGuide({ facts }: { facts: DeploymentFacts }) {
  const { origin, exampleModel: model } = facts;
  return (
    <>
      <p>
        Anything that answers OpenAI&apos;s <C>POST /chat/completions</C> can sell on svc: a GPU server of your own, or a hosted API your
        key pays for. You post an offer (your upstream&apos;s base URL and key, the models, a price per diem and how many diem a day you
        sell); svc routes buyers&apos; requests to it when it is the cheapest that fits, forwards each once with your key, meters it from
        the upstream&apos;s usage checked against its own count, and credits you the clear less the platform fee ({formatBps(facts.feeBps)}
        ). Withdraw to your wallet from <Link href="/supply/earnings">Earnings</Link> or <C>POST /v1/supply/withdrawals</C>.
      </p>

      <SubHeading id="suppliers-upstreams">Common upstreams</SubHeading>
      <p>
        The base URL is the part before <C>/chat/completions</C>; <C>upstream_model</C> is the name the upstream knows the model by. The
        upstream must be reachable from svc over https on a public address (put TLS in front of a server of your own, e.g. Caddy or nginx);
        plain http and private addresses only for hosts the operator lists in <C>PRIVATE_UPSTREAM_ALLOW</C> (a vLLM beside the app).
      </p>
      {UPSTREAMS.map((u) => (
        <div key={u.id} className="flex flex-col gap-2">
          <h4 id={`suppliers-${u.id}`} className="font-semibold">
            {u.title}
          </h4>
          <CodeBlock title={u.title} language="sh" code={u.run} />
          <NameTable
            caption={`${u.title} as an upstream`}
            name="Field"
            rows={[
              ["upstream_base_url", u.base],
              ["upstream_model", u.model],
              ["Notes", u.notes],
            ]}
          />
        </div>
      ))}

      <SubHeading id="suppliers-declarations">What an offer declares</SubHeading>
      <p>
        The declarations are your word; buyers choose by them, and the platform checks them. A new or changed offer is <em>verifying</em>{" "}
        and off the book until its first fidelity probes pass (seconds; see <Link href="/docs/probes">Fidelity probes</Link>
        ), and probe rounds keep checking it: an offer that serves another model, cuts answers short or breaks structured outputs is flagged
        and delisted until it passes again. Measured latency, throughput and disputes are shown beside it (
        <Link href="/docs/quality">Measured quality</Link>).
      </p>
      <NameTable caption="Fields of an offer" name="Field" rows={DECLARATIONS} />

      <SubHeading id="suppliers-post">Post an offer with the API</SubHeading>
      <p>
        Sign in with your wallet (the <C>svc_session</C> cookie, as in the quick start), then post. svc checks the upstream before it
        accepts the offer (the key works, the models are served): a refusal names what failed. The key is stored encrypted and never
        returned.
      </p>
      <CodeBlock
        title="Post, read, pause"
        language="sh"
        code={`# UPSTREAM_BASE_URL and UPSTREAM_API_KEY: your server's /v1 and its key (see above)
curl -b jar.txt "${origin}/v1/supply/offers" -H 'content-type: application/json' -d '{
  "upstream_base_url": "'"$UPSTREAM_BASE_URL"'",
  "upstream_api_key": "'"$UPSTREAM_API_KEY"'",
  "models": [{"id": "${model}", "upstream_model": "llama-3.3-70b"}],
  "price_cents": 85,
  "daily_capacity": "25",
  "quantization": "fp8",
  "data_policy": {"retains_prompts": false, "trains_on_prompts": false},
  "streaming": {"streams": true, "bills_cancelled_in_full": false}
}'
# your offers: status, declared, probe (verifying → passing), on_book, today's use, earnings
curl -b jar.txt "${origin}/v1/supply/offers"
# pause it (or change any field: a change is verified again before it serves)
curl -b jar.txt -X PATCH "${origin}/v1/supply/offers/<offer id>" -H 'content-type: application/json' -d '{"status":"paused"}'`}
      />

      <SubHeading id="suppliers-dashboard">Post an offer in the dashboard</SubHeading>
      <ol className="ml-5 list-decimal space-y-1">
        <li>
          Open <Link href="/supply">Supply</Link> and sign in with your wallet.
        </li>
        <li>Optionally set your supplier name: buyers see it beside your public id (sup_…) in the provider table.</li>
        <li>
          Fill in the offer: the upstream&apos;s base URL and key, the models (and the name your upstream knows each by), price and daily
          capacity, then the declarations. The data policy starts unset and must be chosen.
        </li>
        <li>
          Post it: the upstream is checked first, then the offer shows <em>Verifying</em> until its probes pass, then <em>On the book</em>.
          Edit, pause or delist it from the list below the form; earnings per day and offer are under Earnings.
        </li>
      </ol>
    </>
  );
}
