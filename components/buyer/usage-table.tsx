"use client";

import { useCursorPages, usageKey, type UsagePage } from "@/components/buyer/queries";
import { Badge } from "@/components/ui/badge";
import { ButtonLink } from "@/components/ui/button";
import { Panel } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { diemColumn, formatCents, formatDateTime, formatInteger, formatMs, usdColumn } from "@/components/ui/format";
import { LoadMore, QueryState } from "@/components/ui/query-state";
import { RowCard, Table, Td, Th } from "@/components/ui/table";
import { Term } from "@/components/ui/term";

const PAGE = 25;

export function UsagePanel() {
  const query = useCursorPages<UsagePage["data"][number]>(usageKey, `/v1/account/usage?limit=${PAGE}`);

  return (
    <Panel title="Requests" description="Every completion: tokens, the capacity it burned, the price it cleared at and what it cost.">
      <QueryState query={query} loadingLabel="Loading your requests" errorTitle="Couldn't load your requests">
        {(rows) =>
          rows.length === 0 ? (
            <EmptyState title="No requests yet" action={<ButtonLink href="/dashboard/keys">Create an API key</ButtonLink>}>
              Call POST /v1/chat/completions with one of your keys and each request shows up here.
            </EmptyState>
          ) : (
            <div className="flex flex-col gap-4">
              <RequestsTable rows={rows} />
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

function Tokens({ row }: { row: UsageRow }) {
  return (
    <>
      {formatInteger(row.prompt_tokens)} / {formatInteger(row.completion_tokens)}
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
function RequestsTable({ rows }: { rows: UsageRow[] }) {
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
          <Th>Time</Th>
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
            <Td className="text-zinc-600 dark:text-zinc-400">{formatDateTime(row.created_at)}</Td>
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
