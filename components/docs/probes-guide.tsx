/** The docs on fidelity probes: what the platform sends each offer, who pays, what a flag means and what it cannot catch. */
import { C } from "@/components/docs/code-block";
import { SubHeading } from "@/components/docs/doc-section";
import { env } from "@/lib/env";
import { LIMIT_MAX_TOKENS, PROBE_REASONING_EFFORT } from "@/lib/probes/catalog";
import { EVIDENCE_MAX_CHARS } from "@/lib/probes/judge";
import { PROBE_KEEP_ROUNDS } from "@/lib/probes/round";
import { formatMicros } from "@/lib/money";
import { defaultReasoningBudget } from "@/lib/upstream/metering";

function every(ms: number): string {
  if (ms === 0) return "never (probes are off on this deployment)";
  return ms % 3_600_000 === 0 ? `every ${ms / 3_600_000} h` : `every ${Math.round(ms / 60_000)} min`;
}

function duration(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} day${ms === 86_400_000 ? "" : "s"}`;
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 60_000)} min`;
}

export function ProbesGuide() {
  return (
    <>
      <p>
        Price is not the only thing an offer sells: an upstream can serve a cheaper model under the name, a quantization that breaks
        structured outputs, or answers cut short. So the platform checks. On this deployment a probe round runs{" "}
        {every(env.PROBE_INTERVAL_MS)} (one instance of the fleet runs it) over every live offer: active, healthy, with capacity left today,
        whether on the book or delisted by an earlier round. A round covers whole models (the least recently probed first), at most{" "}
        {env.PROBE_MAX_OFFERS_PER_ROUND} offers.
      </p>

      <SubHeading id="probes-what">What is sent</SubHeading>
      <p>
        Requests a supplier cannot tell from buyers&apos;. Each round draws, for each model, a fresh set from templates and vocabulary keyed
        by a secret only the platform holds: no prompt is a fixed string in this repository, and no field has a fixed value. A probe has the
        router&apos;s shape exactly (<C>model</C>, <C>max_tokens</C>, <C>stream</C>, <C>messages</C>, then the sampling fields buyers send,
        in the order the router forwards them), an <C>X-Request-Id</C> of the router&apos;s form (<C>req_</C> and 24 hex digits, a new one
        per request, as every forward carries), no <C>seed</C>, and <C>temperature</C>, <C>top_p</C>, <C>stop</C> and <C>max_tokens</C>{" "}
        drawn from the ranges buyers use (sometimes absent, as buyers leave them). Prompts vary in wording, system prompt and conversation
        history. Each probe waits a random time before it is sent
        {env.PROBE_SPREAD_MS > 0 ? ` (up to ${Math.round(env.PROBE_SPREAD_MS / 1000)} s here)` : ""}, so a round is not a burst.
      </p>
      <p>A set is five probes, the same for every offer of the model in the round:</p>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          <C>echo</C>: a request to repeat a generated code (an order number, a ticket id), sent at <C>temperature</C> 0 as many buyers
          send: svc knows the right answer, and the whole answer is compared across offers and with the reference.
        </li>
        <li>
          <C>chat</C>: another echo with buyer sampling (not compared: a sampled answer may differ between honest offers).
        </li>
        <li>
          <C>limit</C>: a request for a long text under a small <C>max_tokens</C> ({LIMIT_MAX_TOKENS.min} to {LIMIT_MAX_TOKENS.max}); not
          sent to models that bill hidden reasoning.
        </li>
        <li>
          <C>json</C> (to offers serving structured outputs): an extraction whose strict <C>json_schema</C> has generated field names.
        </li>
        <li>
          <C>tool</C> (to offers serving tools): a request that must call a generated tool, sometimes beside a second tool it must not call.
        </li>
      </ul>
      <p>
        To a model that bills hidden reasoning (<C>bills_reasoning</C>) every probe also sends <C>reasoning_effort</C>{" "}
        {PROBE_REASONING_EFFORT}, so its <C>max_tokens</C> includes that effort&apos;s reasoning budget (
        {defaultReasoningBudget(PROBE_REASONING_EFFORT)} tokens) and the reasoning the offer claims is checked. They go from the platform
        straight to the offer&apos;s upstream, under the offer&apos;s upstream model name and key, with the router&apos;s client, timeout,
        response-size limit and address rules: the same wire a buyer&apos;s forward takes.
      </p>

      <SubHeading id="probes-pay">Who pays, and the budget</SubHeading>
      <p>
        The platform buys each probe like a buyer: at the offer&apos;s price but never above the model&apos;s <em>going price</em>, billed
        by the same rules (svc&apos;s own token count against the upstream&apos;s claim), its burn counted on the offer&apos;s day. The
        going price is the capacity-weighted median of the model&apos;s book (the lowest price at which half of its diem on the book is
        available, the pool summary&apos;s <C>median_price_cents</C>), at most {env.DEFAULT_MAX_PRICE_CENTS} cents per diem (that price when
        nothing is on the book): a sliver of capacity posted at 1 cent does not move it, and an offer priced above it is probed at it. The
        supplier earns exactly what a buyer&apos;s request of that size at that price would have earned it; the platform&apos;s fee accounts
        pay that share (a <C>probe</C> entry in the platform&apos;s ledger). A probe is paid for before it is sent: its most expensive
        answer is held on a platform account and counted against the day&apos;s budget (
        <C>{formatMicros(BigInt(env.PROBE_DAILY_BUDGET_MICROS))}</C> USDC of charges per UTC day here). When the budget or the
        platform&apos;s balance cannot cover a probe, or the offer has no capacity left for it, the probe is not sent (and counted in{" "}
        <C>svc_probes_skipped_total</C>). An answer that is not a chat completion is not paid, as for a buyer.
      </p>

      <SubHeading id="probes-checks">What a probe checks</SubHeading>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          <C>model</C>: the answer&apos;s <C>model</C> is the upstream model the offer maps to, or a dated snapshot of it (<C>gpt-4o</C>{" "}
          answered as <C>gpt-4o-2024-08-06</C>, <C>mistral-large-2407</C> or <C>claude-3-5-sonnet-20240620</C> for their names; case is
          ignored). An answer without a <C>model</C> fails.
        </li>
        <li>
          <C>answer</C>: the echo&apos;s generated code is in the answer (letters and digits compared, case and punctuation ignored).
        </li>
        <li>
          <C>stop</C>: no <C>stop</C> sequence the probe sent appears in the answer.
        </li>
        <li>
          <C>max_tokens</C>: the limit probe&apos;s answer, counted by svc, stays within its <C>max_tokens</C> (with the same tolerance for
          tokenizer differences as usage claims).
        </li>
        <li>
          <C>json_schema</C> and <C>tool_schema</C>: the answer parses and satisfies the requested schema; the named tool is called with
          arguments that satisfy its parameters (and not another tool sent beside it).
        </li>
        <li>
          <C>truncated</C>: <C>finish_reason</C> <C>length</C>, or an empty answer, to a request whose answer fits easily (not the limit
          probe, which asks to be cut short).
        </li>
        <li>
          <C>usage</C>: the usage the upstream claims is one a buyer&apos;s request would hold against the offer&apos;s health: more prompt
          tokens than the probe&apos;s length allows, more completion tokens than the <C>max_tokens</C> sent, or more hidden reasoning than
          the budget and the answer make plausible (the billing rules, under Billing). The probe is billed as a buyer&apos;s would be, at
          the bound.
        </li>
        <li>
          <C>consensus</C> (probes sent at temperature 0 only): the normalized answer (case, spacing and surrounding punctuation ignored;
          JSON compared by value) differs from the one a strict majority of the <em>other</em> offers of the model gave in the same round,
          at least two of them. Offers that gave no comparable answer do not count; with fewer than two agreeing, the consensus says
          nothing.
        </li>
        <li>
          <C>reference</C>: when the operator configures a reference endpoint (<C>PROBE_REFERENCE_BASE_URL</C>, asked under the
          marketplace&apos;s model ids), the answer differs from the reference&apos;s.
        </li>
        <li>
          <C>error</C>: the upstream refused a request the offer declares it serves (HTTP 400, 404, 422), or answered something that is not
          a chat completion. No answer at all (a timeout, a refused connection, 5xx, 429, 401, 403) is an outage, not a fidelity failure:
          the offer&apos;s health already takes it off the book, and the probe says nothing about it.
        </li>
      </ul>
      <p>
        An offer that fails any check is <strong>flagged</strong>: its <C>probe.status</C> is <C>flagged</C> with the reason and the
        evidence (each failed check with what was expected and what came back, at most {EVIDENCE_MAX_CHARS} characters each) on{" "}
        <C>GET /v1/market/models/{"{id}"}/offers</C>.{" "}
        {env.PROBE_DELIST_FLAGGED
          ? "On this deployment a flagged offer also leaves the book (no request is routed to it, the book and depth leave it out) until a later round passes it."
          : "On this deployment a flagged offer stays on the book (the operator turned delisting off); buyers see the flag."}{" "}
        A flagged offer is not bought from every round:{" "}
        {env.PROBE_FLAGGED_BACKOFF_MS === 0
          ? "on this deployment it is probed again by every round."
          : `it is probed again ${duration(env.PROBE_FLAGGED_BACKOFF_MS)} after the round that flagged it, twice as long after each further round that flags it (at most ${duration(Math.max(env.PROBE_FLAGGED_BACKOFF_MAX_MS, env.PROBE_FLAGGED_BACKOFF_MS))}); a supplier who changes the offer's upstream or models is probed ${env.PROBE_PROBATION ? "at once (probation, below)" : "by the next round"}.`}{" "}
        An offer whose answers all pass is <C>passing</C> and back on the book. A round in which an offer answered nothing changes nothing.
        The evidence of each offer&apos;s last {PROBE_KEEP_ROUNDS} rounds is kept.
      </p>

      <SubHeading id="probes-probation">New and changed offers: probation</SubHeading>
      <p>
        {env.PROBE_PROBATION ? (
          <>
            Posting an offer, or changing its upstream URL, key or models, puts it in probation: its <C>probe.status</C> is <C>verifying</C>{" "}
            and it takes no buyer traffic until its first probe set passes. That set is sent at once, to that offer alone, right after the
            post or change is answered (each probe within {Math.max(1, Math.round(env.PROBE_PROBATION_SPREAD_MS / 1000))} s here), so an
            honest offer is routable seconds later. An offer that fails is flagged and stays off the book whatever the flag policy below (it
            never served). When the platform cannot pay for probes (its probe funds are empty, or the day&apos;s budget is spent) the offer
            is listed as <C>unverified</C> and serves: buyers see the difference and can keep to checked offers with{" "}
            <C>provider.require_verified: true</C> (only offers whose probes passed). A flagged offer whose supplier changes its key while
            probes cannot run stays flagged. An upstream that answers nothing leaves the offer verifying until a round gets an answer.
          </>
        ) : (
          "On this deployment probation is off: a new or changed offer serves at once and is probed by the next round."
        )}
      </p>
      <p>
        The probes are paid from the platform&apos;s fee account, which the operator funds (<C>npm run probes -- --fund 10.00</C>, a{" "}
        <C>probe_funding</C> entry in the ledger); <C>svc_probe_funds_available_usdc_micros</C> and the <C>SvcProbeFundsLow</C> alert show
        what is left. The development stack funds it when it starts, so its demo offers are probed too.
      </p>

      <SubHeading id="probes-limits">What probes cannot detect</SubHeading>
      <ul className="ml-5 list-disc space-y-1">
        <li>
          A supplier that tells probes apart by what no request shape can hide: they come from the platform&apos;s own connection (not the
          router&apos;s buyers&apos; mix of models and traffic), they are short tasks rather than a buyer&apos;s real workload, they arrive
          at a rate unrelated to the market&apos;s, and the probation set comes right after a post or change. A supplier that serves every
          request from the real model while it could be probed (a new offer, say) and substitutes later is caught only by later rounds.
          Probes raise the cost of cheating; they do not prove every answer.
        </li>
        <li>
          Quality differences too small to change a short answer (a mild quantization, a slightly different snapshot): an echo or a schema
          shows that a model follows instructions, not which model it is; the model name, the consensus at temperature 0 and the reference
          are what tell models apart.
        </li>
        <li>
          A first probe set has no consensus (one offer alone): probation judges the model name, the answers svc can decide itself, the
          schemas, the limits and usage, and the reference when one is configured.
        </li>
        <li>A model most of whose offers cheat the same way: the consensus is then theirs.</li>
        <li>
          Anything, by disagreement, where there is neither a consensus (fewer than three offers, or no two agreeing) nor a reference: then
          only the <C>model</C>, schema and truncation checks speak.
        </li>
        <li>
          Upstreams that are honest but not deterministic at temperature 0 can disagree on long answers; the probes ask for short ones.
        </li>
      </ul>
    </>
  );
}
