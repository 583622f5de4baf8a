/** The docs on the `provider` object: choosing among the offers of a model by more than price, and its defaults. */
import { C, CodeBlock } from "@/components/docs/code-block";
import { SubHeading } from "@/components/docs/doc-section";
import type { DeploymentFacts } from "@/components/docs/guides";
import { NameTable } from "@/components/docs/name-table";
import { QUANTIZATIONS } from "@/lib/supply/schemas";
import {
  MAX_PREFERRED_LATENCY_S,
  MAX_PREFERRED_THROUGHPUT_TPS,
  MAX_PRICE_USD_PER_MTOK,
  MAX_PROVIDER_IDS,
  PROVIDER_SORTS,
} from "@/lib/market/provider-schemas";
import { ANSWER_CHECK_MIN_CHECKED, CHECK_WINDOW_DAYS as ANSWER_CHECK_WINDOW_DAYS } from "@/lib/market/quality/answer-checks";

const FIELDS: [string, string][] = [
  [
    "sort",
    `${PROVIDER_SORTS.join(" | ")}. price (the default): cheapest first. latency: lowest measured median upstream latency first. throughput: highest measured output tokens per second first. quality: lowest answer-check error rate first (tool calls and strict json_schema answers that failed their schema, over the last ${ANSWER_CHECK_WINDOW_DAYS} days, from at least ${ANSWER_CHECK_MIN_CHECKED} checked answers). Offers without enough traffic to be measured come after those with figures. Offers that tie are ordered by price-time priority (price, then posting time).`,
  ],
  [
    "only",
    `Offer ids and supplier ids (sup_…), up to ${MAX_PROVIDER_IDS}: route only to these offers or to offers of these suppliers. GET /v1/market/models/{id}/offers lists both.`,
  ],
  ["ignore", `Offer ids and supplier ids, up to ${MAX_PROVIDER_IDS}: never route to these.`],
  [
    "quantizations",
    `A subset of ${QUANTIZATIONS.join(", ")}: route only to offers declaring one of them (unknown: the supplier has not said).`,
  ],
  [
    "data_collection",
    "allow (the default) or deny: deny routes only to offers declaring that they neither retain prompts nor train on them. An offer that has not said counts as doing both.",
  ],
  [
    "max_price",
    `{prompt, completion}, USD per 1M tokens (0 to ${MAX_PRICE_USD_PER_MTOK}), either optional: an offer qualifies when 1M tokens at the model's list price and its price cost at most that. It applies beside your max price in cents per diem (X-Svc-Max-Cents), never instead of it.`,
  ],
  [
    "require_verified",
    "true: route only to offers whose fidelity probes passed (probe.status passing on GET /v1/market/models/{id}/offers). Offers not probed yet, offers posted while probes could not run (unverified), offers in probation (verifying) and flagged offers are excluded. false (the default): any offer on the book.",
  ],
  [
    "preferred_max_latency",
    `Seconds (up to ${MAX_PREFERRED_LATENCY_S}). Soft: offers whose measured median latency is at most this come first; it never excludes one.`,
  ],
  [
    "preferred_min_throughput",
    `Tokens per second (up to ${MAX_PREFERRED_THROUGHPUT_TPS}). Soft, likewise. An offer without figures does not meet either; one meeting both comes before one meeting one.`,
  ],
  [
    "cache_affinity",
    "true (the default) or false. When svc sent this request's prompt prefix to an offer that caches prompts, within its retention, offers are ordered by their effective price for this request (the cached part at the model's cache-read price), the one holding the prefix first among equals: a session stays where its cache is while that is cheapest. false orders by posted price alone; cached tokens are billed at the cache price either way.",
  ],
  [
    "require_parameters",
    "Accepted, true or false, with no effect: svc always routes only to offers that serve every parameter the request uses (tools, json_schema, images), so false cannot widen the choice.",
  ],
  [
    "allow_fallbacks",
    "Accepted, with no effect: svc forwards a request once. If the chosen offer's upstream fails you get the error, nothing is charged, and your retry may route elsewhere.",
  ],
];

/**
 * The curl example's provider object: it routes on the stock dev market (prisma/seed.ts DEMO_OFFERS: the 80-cent fp8
 * offer keeps no prompts), which tests/integration/guiding-errors.test.ts checks against offers declared the same way.
 */
export const PROVIDER_EXAMPLE = {
  sort: "latency",
  data_collection: "deny",
  quantizations: ["fp8", "bf16", "fp16"],
  max_price: { completion: 5 },
};

export function ProviderPreferencesGuide({ facts }: { facts: DeploymentFacts }) {
  const { origin, exampleModel: model } = facts;
  return (
    <>
      <p>
        By default svc sends a request to the cheapest offer that can take it. The optional <C>provider</C> object of{" "}
        <C>POST /v1/chat/completions</C> and <C>POST /v1/responses</C> chooses by more than price, with OpenRouter&apos;s field names where
        they mean the same. Filters exclude offers, soft preferences only reorder them, and offers that tie are ordered by price-time
        priority. The request is still reserved on the first offer in that order that is within your max price and has capacity today for
        its worst case, and forwarded once. Your balance and the key&apos;s spend limit must cover the worst case at that offer&apos;s
        price: if they do not, the answer is 402 as usual, even if a cheaper offer later in the order would fit (set <C>max_price</C> or
        lower <C>max_tokens</C> to keep a sort within budget).
      </p>
      <NameTable caption="Fields of provider" name="Field" rows={FIELDS} />
      <p>
        Any other field, a value outside these lists or bounds, and an id that names no offer and no supplier are a 400 whose <C>param</C>{" "}
        names the field (e.g. <C>provider.sort</C>), before anything is reserved or charged. A <C>null</C> field is the same as a missing
        one.
      </p>
      <CodeBlock
        title="curl"
        language="sh"
        code={`# offers that keep no prompts, in fp8 or better, at most $5 per 1M output tokens, fastest first
curl ${origin}/v1/chat/completions -H "Authorization: Bearer $SVC_API_KEY" -H 'content-type: application/json' -d '{
  "model": "${model}",
  "messages": [{"role": "user", "content": "Hello"}],
  "max_tokens": 200,
  "provider": ${JSON.stringify(PROVIDER_EXAMPLE).replaceAll(",", ", ").replaceAll(":", ": ")}
}'`}
      />

      <SubHeading id="provider-defaults">Defaults on a key and on the account</SubHeading>
      <p>
        A key and the account can each hold default preferences, <C>provider_preferences</C>, with the same fields and bounds: set them with{" "}
        <C>POST</C> and <C>PATCH /v1/account/api-keys</C> and with <C>PATCH /v1/account</C>; key views, <C>GET /v1/key</C> and{" "}
        <C>GET /v1/account</C> show them, and <C>null</C> clears them. They are merged field by field: the request&apos;s own fields win,
        then the key&apos;s, then the account&apos;s. A key pinned to <C>{'{"data_collection":"deny"}'}</C> keeps that while the
        request&apos;s own <C>sort</C> still applies; a request that sends <C>data_collection: &quot;allow&quot;</C> overrides it.
      </p>

      <SubHeading id="provider-limits">Declared limits and no-offer answers</SubHeading>
      <p>
        An offer is never sent a request larger than it declares it serves: the prompt and the worst-case output must fit its declared
        context, and the worst-case output its declared output cap. Without <C>max_tokens</C> the worst case is the model&apos;s output cap,
        so an offer that declares a smaller cap only takes requests that send a <C>max_tokens</C> within it.
      </p>
      <p>
        When your preferences leave no offer, the 503 says which one did, with the usual <C>X-Svc-*</C> headers:{" "}
        <C>no_offer_matches_provider_only</C>, <C>_ignore</C>, <C>_quantizations</C>, <C>_data_collection</C>, <C>_cancelled_billing</C>,{" "}
        <C>_max_price</C> or <C>_require_verified</C> (the last filter, in that order, that left nothing), and <C>param</C> names it.{" "}
        <C>no_offer_fits_request</C> means the offers left declare smaller limits than the request&apos;s worst case, and{" "}
        <C>no_offer_passing_probes</C> that those within your max price are off the book after failing a fidelity probe.
      </p>
    </>
  );
}
