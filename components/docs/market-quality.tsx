/** The docs on market quality as svc measures it from real traffic, and on what suppliers declare about their offers. */
import { C } from "@/components/docs/code-block";
import { SubHeading } from "@/components/docs/doc-section";
import { BUCKET_MS, KEEP_BUCKETS, LATENCY_BIN_LOWER_BOUNDS, SAMPLES_PER_SOURCE_HOUR, WINDOWS } from "@/lib/market/quality/figures";
import { ANSWER_CHECK_MIN_CHECKED, CHECK_WINDOW_DAYS, DEMOTE_FACTOR, DEMOTE_MARGIN } from "@/lib/market/quality/answer-checks";
import { MAX_CACHE_RETENTION_SECONDS, MAX_DECLARED_TOKENS, MIN_CACHE_RETENTION_SECONDS, QUANTIZATIONS } from "@/lib/supply/schemas";

export function MarketQuality({ minRequests, minSources, refreshMs }: { minRequests: number; minSources: number; refreshMs: number }) {
  const bucketMinutes = BUCKET_MS / 60_000;
  const recent = WINDOWS["1h"];
  const day = WINDOWS["24h"];
  return (
    <>
      <p>
        <C>GET /v1/market/models/{"{id}"}/offers</C> lists each live offer of a model (active; on the book or not: an offer the fidelity
        probes flagged is listed and marked), cheapest first, then oldest, with its price, what 1M input and 1M output tokens cost at that
        price, the capacity it has left today, and three kinds of facts that are worth different things: what svc <strong>measured</strong>,
        what the supplier <strong>declares</strong>, and what the platform&apos;s probes <strong>checked</strong>.
      </p>

      <SubHeading id="quality-measured">Measured from real traffic</SubHeading>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          A <strong>forward</strong> is a buyer&apos;s request (or a probe of the platform&apos;s) sent to the offer&apos;s upstream that
          was either answered and billed, or failed by the supplier&apos;s fault: unreachable, its key refused, an HTTP error other than
          400, 413 and 422, an unusable answer, a timeout or an oversized answer the request does not explain (see Billing and offer
          health). Not forwards of the offer&apos;s: failures the request explains, a wait for a connection of svc&apos;s own, and the
          upstream&apos;s 400, 413 and 422 (the buyer&apos;s errors). An answer whose claimed usage was out of bounds was still answered and
          billed: it counts as an answer.
        </li>
        <li>
          <strong>Success rate</strong>: answers billed / forwards. <strong>Dispute rate</strong>: answers whose claimed usage exceeded
          svc&apos;s own count beyond the tolerance (billed at svc&apos;s count) / answers.
        </li>
        <li>
          <strong>Latency</strong> p50 and p95: the upstream&apos;s time from the forward sent to the answer read, over answered forwards
          (not svc&apos;s own time). It is kept as a histogram of fixed bins whose bounds grow by √2 ({LATENCY_BIN_LOWER_BOUNDS[0]} ms,{" "}
          {LATENCY_BIN_LOWER_BOUNDS[1]} ms, {LATENCY_BIN_LOWER_BOUNDS[2]} ms … up to{" "}
          {LATENCY_BIN_LOWER_BOUNDS.at(-1)!.toLocaleString("en-US")} ms), so a percentile is exact to its bin (within about 41%) and placed
          inside it by rank.
        </li>
        <li>
          <strong>Throughput</strong>: completion tokens billed / seconds of upstream latency, over answered forwards.
        </li>
        <li>
          Two rolling <strong>windows</strong>, counted in whole {bucketMinutes}-minute buckets: <C>1h</C> is the current bucket and the{" "}
          {recent - 1} before it (the last {recent * bucketMinutes - bucketMinutes} to {recent * bucketMinutes} minutes), <C>24h</C> the
          current and the {day - 1} before it. A window with fewer than <strong>{minRequests}</strong> forwards (<C>min_requests</C>), or
          with forwards from fewer than <strong>{minSources}</strong> sources (<C>min_sources</C>), says <C>sufficient: false</C> and shows
          no figures (null) rather than noise.
        </li>
        <li>
          <strong>Nobody can buy a figure.</strong> Only traffic the supplier does not control is measured. A request from the offer&apos;s
          own supplier (its account, which pays for every key it holds) is served and billed as any other, and never measured. A buyer
          account weighs at most <strong>{SAMPLES_PER_SOURCE_HOUR}</strong> forwards per offer and hour: its further forwards that hour are
          served and billed, not measured, so a handful of accounts trading with an offer cannot move its median or its throughput. The
          platform&apos;s fidelity probes, which a supplier cannot tell from buyers, are measured with buyers&apos; traffic as one more
          source, without that bound. A window&apos;s <C>sources</C> are the distinct buyer accounts (and the probes, as one) it measured;
          its <C>requests</C> count only measured forwards.
        </li>
        <li>
          The clear records each batch of answers in the statement that bills them, and a supplier&apos;s failure is recorded with the
          health report it already makes: measuring adds no round trip to a request. Measurements are kept{" "}
          {(KEEP_BUCKETS * bucketMinutes) / 60} hours.
        </li>
        <li>
          Routing (<C>provider.sort</C> by latency or throughput, the soft preferences) reads a snapshot refreshed every{" "}
          {Math.round(refreshMs / 1000)} s: the <C>1h</C> window&apos;s median latency and throughput when that window has the minimum
          sample, else the <C>24h</C> window&apos;s, else none. The offers list computes its windows exactly, shared for a few seconds.
        </li>
      </ul>

      <SubHeading id="quality-answer-checks">Tool calls and structured outputs, checked</SubHeading>
      <p>
        Every answer served is checked against what its request constrained it to, after it went out (no latency added): each tool call must
        parse as JSON, name a tool the request sent, and satisfy that tool&apos;s <C>parameters</C> schema; an answer to a{" "}
        <C>json_schema</C> response format with <C>strict: true</C> must parse and satisfy its schema (<C>pattern</C> and <C>format</C> are
        not checked: a request&apos;s regular expression is not run over a supplier&apos;s text). Each offer&apos;s counts over the last 7
        days are on the offers list as <C>answer_checks</C>: checked, failed, by how (<C>invalid_json</C>, <C>unknown_tool</C>,{" "}
        <C>schema_mismatch</C>), and the error rate. A stream cut short is not checked.
      </p>
      <p>
        Routing reads them. An offer&apos;s <strong>error rate</strong> is its failed / checked tool calls and strict json_schema answers
        over the last {CHECK_WINDOW_DAYS} days, once at least <strong>{ANSWER_CHECK_MIN_CHECKED}</strong> were checked (<C>error_rate</C> in{" "}
        <C>answer_checks</C>; null before). It stands <strong>well above</strong> its model&apos;s median (the median of the rates of the
        model&apos;s offers that have one) when it is at least {Math.round(DEMOTE_MARGIN * 100)} points above it and at least{" "}
        {DEMOTE_FACTOR} times it. Such an offer is <strong>demoted</strong> (<C>demoted: true</C>): a request that sends tools or a
        json_schema response format is routed to it only after every other offer that can take it, whatever its price or the request&apos;s
        sort; a request without either is routed as before. <C>provider.sort: &quot;quality&quot;</C> asks for the lowest error rate first
        (offers without one after those with). Both are read from the routing snapshot, refreshed with the measured figures.
      </p>

      <SubHeading id="quality-declared">Declared by the supplier</SubHeading>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          <C>quantization</C>: the numeric format the upstream serves the model in, one of{" "}
          {QUANTIZATIONS.map((q, i) => (
            <span key={q}>
              {i > 0 && ", "}
              <C>{q}</C>
            </span>
          ))}{" "}
          (<C>unknown</C> until it says).
        </li>
        <li>
          <C>data_policy</C>: <C>retains_prompts</C> (the upstream keeps prompts or answers after answering) and <C>trains_on_prompts</C>{" "}
          (it uses them for training), both required when given. An offer that has not said is shown retaining and training, so{" "}
          <C>provider.data_collection: &quot;deny&quot;</C> excludes it.
        </li>
        <li>
          <C>context_tokens</C>, <C>max_output_tokens</C>: limits the upstream serves below the model&apos;s own (1 to{" "}
          {MAX_DECLARED_TOKENS.toLocaleString("en-US")}; <C>null</C> in a PATCH goes back to the model&apos;s). The offers list shows, per
          model, the smaller of the declared limit and the model&apos;s: svc never forwards more than the model allows.
        </li>
        <li>
          <C>prompt_caching</C>: <C>caches_prompts</C> (the upstream caches prompt prefixes: vLLM&apos;s, SGLang&apos;s or llama.cpp&apos;s
          prefix cache, a provider&apos;s prompt cache) and <C>retention_seconds</C>, the least time it keeps one after it was last sent,{" "}
          {MIN_CACHE_RETENTION_SECONDS} to {MAX_CACHE_RETENTION_SECONDS.toLocaleString("en-US")} seconds, 300 unless said. On such an offer
          the cached prompt tokens are billed at the model&apos;s cache-read price: the larger of what the upstream reports and what svc
          itself sent the offer within that time (so a supplier gains nothing by under-reporting), and svc keeps a session on the offer
          while its effective price is the best (Router and pricing: prompt caching).
        </li>
        <li>
          Set them with <C>POST /v1/supply/offers</C> and change them with <C>PATCH /v1/supply/offers/{"{id}"}</C> like the rest of the
          offer; a malformed one is a 400 naming the field. The supplier&apos;s own view shows them as <C>declared</C>.
        </li>
        <li>
          A declaration is the <strong>supplier&apos;s word</strong>: svc cannot see inside an upstream, and does not check what it is told
          here. The fidelity probes are the platform&apos;s own check of what an offer serves (their section says what they can and cannot
          detect); the measured figures are what buyers&apos; traffic actually got.
        </li>
      </ul>
    </>
  );
}
