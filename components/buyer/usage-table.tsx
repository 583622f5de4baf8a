"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { usageKey, type UsagePage } from "@/components/buyer/queries";
import { Badge } from "@/components/ui/badge";
import { Button, ButtonLink } from "@/components/ui/button";
import { Panel } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatCents, formatDateTime, formatDiem, formatInteger, formatUsd } from "@/components/ui/format";
import { QueryState } from "@/components/ui/query-state";
import { Table, Td, Th } from "@/components/ui/table";
import { api } from "@/lib/browser/api";
import { describeError } from "@/lib/browser/errors";

const PAGE = 25;

export function UsagePanel() {
  const usage = useInfiniteQuery({
    queryKey: usageKey,
    queryFn: ({ pageParam }) =>
      api<UsagePage>(`/v1/account/usage?limit=${PAGE}${pageParam ? `&cursor=${encodeURIComponent(pageParam)}` : ""}`),
    initialPageParam: "",
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const query = { ...usage, data: usage.data?.pages.flatMap((p) => p.data) };

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
              <Table caption="Requests">
                <thead>
                  <tr>
                    <Th>Time</Th>
                    <Th>Model</Th>
                    <Th className="hidden md:table-cell">Key</Th>
                    <Th className="hidden text-right md:table-cell">Tokens in / out</Th>
                    <Th className="hidden text-right lg:table-cell">Burn</Th>
                    <Th className="hidden text-right sm:table-cell">Price</Th>
                    <Th className="text-right">Cost</Th>
                    <Th className="hidden text-right lg:table-cell">Latency</Th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((row) => (
                    <tr key={row.id}>
                      <Td className="text-zinc-500 dark:text-zinc-400">{formatDateTime(row.created_at)}</Td>
                      <Td className="font-mono text-xs">{row.model}</Td>
                      <Td className="hidden max-w-40 truncate md:table-cell" title={row.key.prefix}>
                        {row.key.name}
                      </Td>
                      <Td className="hidden text-right tabular-nums md:table-cell">
                        {formatInteger(row.prompt_tokens)} / {formatInteger(row.completion_tokens)}
                        {row.usage_estimated && (
                          <Badge tone="amber" className="ml-1">
                            estimated
                          </Badge>
                        )}
                      </Td>
                      <Td className="hidden text-right tabular-nums lg:table-cell">{formatDiem(row.burn)}</Td>
                      <Td className="hidden text-right tabular-nums sm:table-cell">{formatCents(row.price_cents)}</Td>
                      <Td className="text-right font-medium tabular-nums">{formatUsd(row.cost)}</Td>
                      <Td className="hidden text-right tabular-nums lg:table-cell">{formatInteger(row.latency_ms)} ms</Td>
                    </tr>
                  ))}
                </tbody>
              </Table>
              {usage.isFetchNextPageError && <p role="alert" className="text-sm text-red-700">{describeError(usage.error)}</p>}
              {usage.hasNextPage && (
                <div className="flex justify-center">
                  <Button variant="secondary" loading={usage.isFetchingNextPage} onClick={() => usage.fetchNextPage()}>
                    Load more
                  </Button>
                </div>
              )}
            </div>
          )
        }
      </QueryState>
    </Panel>
  );
}
