"use client";

import { useState, type FormEvent } from "react";
import { GENERATION_ID, GenerationDialog } from "@/components/buyer/generation-detail";
import { useCursorPages, usageKey, type UsagePage } from "@/components/buyer/queries";
import { Badge } from "@/components/ui/badge";
import { Button, ButtonLink } from "@/components/ui/button";
import { Field } from "@/components/ui/field";
import { Panel } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { diemColumn, formatCents, formatDateTime, formatInteger, formatMs, usdColumn } from "@/components/ui/format";
import { LoadMore, QueryState } from "@/components/ui/query-state";
import { RowCard, Table, Td, Th } from "@/components/ui/table";
import { Term } from "@/components/ui/term";

const PAGE = 25;

export function UsagePanel() {
  const query = useCursorPages<UsagePage["data"][number]>(usageKey, `/v1/account/usage?limit=${PAGE}`);
  const [open, setOpen] = useState<string | null>(null);

  return (
    <Panel
      title="Requests"
      description="Every completion: tokens, the capacity it burned, the price it cleared at and what it cost. Open one for who served it and how it was billed."
    >
      <FindRequest onFind={setOpen} />
      <GenerationDialog id={open} onClose={() => setOpen(null)} />
      <QueryState query={query} loadingLabel="Loading your requests" errorTitle="Couldn't load your requests">
        {(rows) =>
          rows.length === 0 ? (
            <EmptyState title="No requests yet" action={<ButtonLink href="/dashboard/keys">Create an API key</ButtonLink>}>
              Call POST /v1/chat/completions with one of your keys and each request shows up here.
            </EmptyState>
          ) : (
            <div className="flex flex-col gap-4">
              <RequestsTable rows={rows} onOpen={setOpen} />
              <p className="text-xs text-zinc-600 dark:text-zinc-400" id="usage-explained">
                Tokens are what the model&apos;s upstream reported (marked <em>estimated</em> when svc counted them itself). A
                request&apos;s <Term term="burn">burn</Term> is its tokens × the model&apos;s list price per million tokens, and its cost is
                that burn × the price it cleared at: a million tokens on a cheap model can cost well under a dollar. Times are UTC.
              </p>
              <LoadMore query={query} />
            </div>
          )
        }
      </QueryState>
    </Panel>
  );
}

type UsageRow = UsagePage["data"][number];

/** Finds a request by the id its answer carried (chatcmpl-…, X-Svc-Generation-Id, or a Responses API resp_…). */
function FindRequest({ onFind }: { onFind: (id: string) => void }) {
  const [text, setText] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  function submit(event: FormEvent) {
    event.preventDefault();
    const id = text.trim();
    if (!GENERATION_ID.test(id)) {
      setProblem("Paste the id an answer carried: chatcmpl-… (or X-Svc-Generation-Id), or resp_… from the Responses API.");
      return;
    }
    setProblem(null);
    onFind(id);
  }
  return (
    <form
      role="search"
      aria-label="Find a request"
      onSubmit={submit}
      className="mb-4 flex flex-col gap-2 sm:flex-row sm:items-start"
      noValidate
    >
      <Field
        label="Find a request by id"
        name="generation_id"
        className="sm:max-w-md sm:flex-1"
        placeholder="chatcmpl-… or resp_…"
        autoComplete="off"
        spellCheck={false}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          setProblem(null);
        }}
        error={problem}
      />
      <Button type="submit" variant="secondary" className="sm:mt-7">
        Find
      </Button>
    </form>
  );
}

/** The request's id as the buyer was given it, opening its detail. */
function OpenRequest({ row, onOpen }: { row: UsageRow; onOpen: (id: string) => void }) {
  return (
    <button
      type="button"
      onClick={() => onOpen(row.id)}
      aria-label={`Open request ${row.id}`}
      className="text-left font-mono text-xs break-all whitespace-normal text-emerald-800 underline decoration-emerald-800/40 underline-offset-2 hover:decoration-emerald-800 dark:text-emerald-300"
    >
      {row.id}
    </button>
  );
}

function Tokens({ row }: { row: UsageRow }) {
  return (
    <>
      {formatInteger(row.prompt_tokens)} / {formatInteger(row.completion_tokens)}
      {row.cached_tokens !== null && row.cached_tokens > 0 && (
        <span className="ml-1 text-xs text-zinc-500">({formatInteger(row.cached_tokens)} cached)</span>
      )}
      {row.usage_estimated && (
        <Badge tone="amber" className="ml-1">
          estimated
        </Badge>
      )}
    </>
  );
}

/**
 * Every request: a table at a desktop width, a card per request on a phone with its cost and latency on top. Cost and
 * burn each have one number of decimals down the column (format.ts, policy 3), exact for every row.
 */
function RequestsTable({ rows, onOpen }: { rows: UsageRow[]; onOpen: (id: string) => void }) {
  const cost = usdColumn(rows.map((r) => r.cost));
  const burn = diemColumn(rows.map((r) => r.burn));
  return (
    <Table
      caption="Requests"
      cards={rows.map((row) => (
        <RowCard
          key={row.id}
          title={<span className="font-mono text-xs">{row.model}</span>}
          titleText={row.model}
          subtitle={formatDateTime(row.created_at)}
          amount={
            <span className="flex flex-col items-end">
              <span>{cost(row.cost)}</span>
              <span className="text-xs font-normal text-zinc-600 dark:text-zinc-400">{formatMs(row.latency_ms)}</span>
            </span>
          }
          facts={[
            { label: "Id", value: <OpenRequest row={row} onOpen={onOpen} /> },
            { label: "Key", value: row.key.name },
            { label: "Tokens in / out", value: <Tokens row={row} /> },
            { label: <Term term="burn">Burn</Term>, value: burn(row.burn) },
            { label: "Price", value: formatCents(row.price_cents) },
          ]}
        />
      ))}
    >
      <thead>
        <tr>
          <Th>Request</Th>
          <Th>Model</Th>
          <Th>Key</Th>
          <Th className="text-right">Tokens in / out</Th>
          <Th className="text-right">
            <Term term="burn">Burn</Term>
          </Th>
          <Th className="text-right">Price</Th>
          <Th className="text-right">Cost</Th>
          <Th className="text-right">Latency</Th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.id}>
            <Td className="max-w-52">
              <OpenRequest row={row} onOpen={onOpen} />
              <span className="block text-xs text-zinc-600 dark:text-zinc-400">{formatDateTime(row.created_at)}</span>
            </Td>
            <Td className="font-mono text-xs">{row.model}</Td>
            <Td className="max-w-40 truncate" title={`${row.key.name} (${row.key.prefix}…)`}>
              {row.key.name}
            </Td>
            <Td className="text-right tabular-nums">
              <Tokens row={row} />
            </Td>
            <Td className="text-right tabular-nums">{burn(row.burn)}</Td>
            <Td className="text-right tabular-nums">{formatCents(row.price_cents)}</Td>
            <Td className="text-right font-medium tabular-nums">{cost(row.cost)}</Td>
            <Td className="text-right tabular-nums">{formatMs(row.latency_ms)}</Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
