"use client";

import { useQuery } from "@tanstack/react-query";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { CopyButton } from "@/components/ui/copy-button";
import { Dialog } from "@/components/ui/dialog";
import { formatCents, formatDateTime, formatDiem, formatInteger, formatMs, formatUsd } from "@/components/ui/format";
import { QueryState } from "@/components/ui/query-state";
import { Term } from "@/components/ui/term";
import { api } from "@/lib/browser/api";
import type { Generation } from "@/lib/router/schemas";

/** The ids a buyer may hold for one request: its chat completion's, or the Responses API's resp_ with the same letters. */
export const GENERATION_ID = /^(chatcmpl-|resp_)[A-Za-z0-9]{1,64}$/;

export function useGeneration(id: string | null) {
  return useQuery({
    queryKey: ["generation", id],
    enabled: id !== null,
    queryFn: () => api<Generation>(`/v1/generations/${encodeURIComponent(id!)}`),
    retry: false,
    staleTime: Infinity,
  });
}

/**
 * One request's page, as OpenRouter's activity rows open: by the id the buyer holds (chatcmpl-… or resp_…), what
 * GET /v1/generations/{id} says of it (under the id the buyer was given): model, the offer and the supplier that served
 * it, the tokens claimed, counted by svc and billed, the cost and its split, latency, finish, the key and its journal entry.
 */
export function GenerationDialog({ id, onClose }: { id: string | null; onClose: () => void }) {
  const generation = useGeneration(id);
  return (
    <Dialog open={id !== null} onClose={onClose} title="Request" description={id && <span className="font-mono break-all">{id}</span>}>
      {id !== null && (
        <QueryState query={generation} loadingLabel="Loading the request" errorTitle="Couldn't load this request">
          {(g) => <GenerationFacts generation={g} />}
        </QueryState>
      )}
      <div className="flex justify-end">
        <Button variant="secondary" onClick={onClose}>
          Close
        </Button>
      </div>
    </Dialog>
  );
}

function GenerationFacts({ generation: g }: { generation: Generation }) {
  const d = g.usage.cost_details;
  const claimed = (n: number | null) => (n === null ? "not reported" : formatInteger(n));
  const counted = (n: number | null) => (n === null ? "not kept" : formatInteger(n));
  const facts: { label: React.ReactNode; value: React.ReactNode }[] = [
    {
      label: "Generation id",
      value: (
        <span className="flex items-center gap-2">
          <span className="font-mono text-xs break-all">{g.id}</span>
          <CopyButton value={g.id} label="Copy generation id" />
        </span>
      ),
    },
    ...(g.completion_id !== g.id
      ? [{ label: "Completion id", value: <span className="font-mono text-xs break-all">{g.completion_id}</span> }]
      : []),
    { label: "Time", value: formatDateTime(g.created_at) },
    { label: "Model", value: <span className="font-mono text-xs">{g.model}</span> },
    { label: "Offer", value: <span className="font-mono text-xs break-all">{g.offer_id}</span> },
    {
      label: "Supplier",
      value: (
        <>
          {g.supplier_name !== null && <>{g.supplier_name} · </>}
          <span className="font-mono text-xs break-all">{g.supplier_id}</span>
        </>
      ),
    },
    {
      label: "Tokens in",
      value: (
        <>
          {formatInteger(d.billed_prompt_tokens)} billed · {claimed(d.claimed_prompt_tokens)} claimed · {counted(d.counted_prompt_tokens)}{" "}
          counted by svc
          {d.billed_cached_tokens !== null && (
            <>
              {" "}
              · {formatInteger(d.billed_cached_tokens)} at the cache price ({claimed(d.claimed_cached_tokens)} claimed cached)
            </>
          )}
        </>
      ),
    },
    {
      label: "Tokens out",
      value: (
        <>
          {formatInteger(d.billed_completion_tokens)} billed · {claimed(d.claimed_completion_tokens)} claimed ·{" "}
          {counted(d.counted_completion_tokens)} counted by svc
        </>
      ),
    },
    ...(d.billed_reasoning_tokens !== null || d.claimed_reasoning_tokens !== null
      ? [
          {
            label: "Reasoning",
            value: (
              <>
                {d.billed_reasoning_tokens === null ? "none" : formatInteger(d.billed_reasoning_tokens)} billed ·{" "}
                {claimed(d.claimed_reasoning_tokens)} claimed
                {d.reasoning_tokens_bound !== null && <> · at most {formatInteger(d.reasoning_tokens_bound)} accepted</>}
              </>
            ),
          },
        ]
      : []),
    {
      label: "Counting",
      value: d.usage_estimated ? (
        <Badge tone="amber">counted by svc: the upstream reported none</Badge>
      ) : d.usage_disputed ? (
        <Badge tone="amber">disputed: svc&apos;s own count was billed</Badge>
      ) : (
        "the upstream's report, checked against svc's count"
      ),
    },
    { label: <Term term="burn">Burn</Term>, value: formatDiem(d.burn) },
    { label: "Price", value: formatCents(d.price_cents_per_diem) },
    { label: "Cost", value: <strong>{formatUsd(d.charge)}</strong> },
    { label: "Supplier's share", value: formatUsd(d.supplier_share) },
    { label: "Platform fee", value: formatUsd(d.platform_fee) },
    {
      label: "Latency",
      value: (
        <>
          {formatMs(g.upstream_latency_ms)} upstream{g.total_latency_ms !== null && <> · {formatMs(g.total_latency_ms)} in all</>}
        </>
      ),
    },
    { label: "Finish", value: g.finish_reason ?? "not recorded" },
    {
      label: "Key",
      value: (
        <>
          {g.key.name} <span className="font-mono text-xs">({g.key.prefix}…)</span>
        </>
      ),
    },
    { label: "Ledger entry", value: <span className="font-mono text-xs break-all">{g.journal_entry_id}</span> },
  ];
  return (
    <dl className="grid grid-cols-1 gap-x-4 gap-y-2 text-sm sm:grid-cols-[10rem_1fr]">
      {facts.map((fact, i) => (
        <div key={i} className="contents">
          <dt className="text-zinc-600 dark:text-zinc-400">{fact.label}</dt>
          <dd className="min-w-0 tabular-nums">{fact.value}</dd>
        </div>
      ))}
    </dl>
  );
}
