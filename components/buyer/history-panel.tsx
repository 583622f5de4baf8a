"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Panel } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDateTime, formatUsd, microsOf, shortHash } from "@/components/ui/format";
import { LoadMore, QueryState } from "@/components/ui/query-state";
import { Table, Td, Th } from "@/components/ui/table";
import { Term } from "@/components/ui/term";
import { useSettings } from "@/components/wallet/providers";
import { api } from "@/lib/browser/api";
import type { LedgerItem, LedgerPage } from "@/lib/ledger/schemas";

const PAGE = 50;
export const ledgerKey = ["ledger"] as const;

type Filter = "all" | "money" | "clear";
const FILTERS: { id: Filter; label: string }[] = [
  { id: "all", label: "Everything" },
  { id: "money", label: "Top-ups and withdrawals" },
  { id: "clear", label: "Requests" },
];

/** What a ledger line is, in words, from this account's point of view. */
function describe(item: LedgerItem): { label: string; tone: "green" | "neutral" | "amber" | "sky" } {
  switch (item.kind) {
    case "topup":
      return { label: "Top-up", tone: "green" };
    case "withdrawal":
      return { label: "Withdrawal", tone: "sky" };
    case "withdrawal_reversal":
      return { label: "Withdrawal returned", tone: "amber" };
    case "clear":
      return item.ledger === "earnings"
        ? { label: "Earned (request served)", tone: "green" }
        : { label: "Request charge", tone: "neutral" };
  }
}

/**
 * Every movement of this account's money (GET /v1/account/ledger): top-ups and withdrawals with their Base
 * transaction, and each clear, buying or earning. Amounts are exact and signed: + credits you.
 */
export function HistoryPanel() {
  const settings = useSettings();
  const [filter, setFilter] = useState<Filter>("all");
  const ledger = useInfiniteQuery({
    queryKey: ledgerKey,
    queryFn: ({ pageParam }) =>
      api<LedgerPage>(`/v1/account/ledger?limit=${PAGE}${pageParam ? `&cursor=${encodeURIComponent(pageParam)}` : ""}`),
    initialPageParam: "",
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const all = ledger.data?.pages.flatMap((p) => p.data);
  const rows = all?.filter((r) => filter === "all" || (filter === "clear" ? r.kind === "clear" : r.kind !== "clear"));
  const query = { ...ledger, data: rows };

  return (
    <Panel
      title="History"
      description={
        <>
          Every movement of your money, newest first: top-ups and withdrawals with their transaction on Base, and each request (
          <Term term="clear">clear</Term>) you paid for or served. + credits you, − debits you.
        </>
      }
    >
      <div role="group" aria-label="Show" className="mb-4 flex flex-wrap gap-2">
        {FILTERS.map((f) => (
          <Button
            key={f.id}
            variant="secondary"
            size="sm"
            aria-pressed={filter === f.id}
            onClick={() => setFilter(f.id)}
            className={cn(filter === f.id && "border-emerald-700 ring-1 ring-emerald-700")}
          >
            {f.label}
          </Button>
        ))}
      </div>
      <QueryState query={query} loadingLabel="Loading your history" errorTitle="Couldn't load your history">
        {(items) =>
          items.length === 0 ? (
            <EmptyState title="Nothing here yet">Top-ups, withdrawals and requests show up here as they happen.</EmptyState>
          ) : (
            <div className="flex flex-col gap-4">
              <Table caption="Money history">
                <thead>
                  <tr>
                    <Th>Date</Th>
                    <Th>What</Th>
                    <Th>Balance</Th>
                    <Th className="text-right">Amount</Th>
                    <Th>Transaction</Th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((item) => {
                    const d = describe(item);
                    const micros = microsOf(item.amount);
                    return (
                      <tr key={`${item.id}-${item.ledger}`}>
                        <Td className="text-zinc-600 dark:text-zinc-400">{formatDateTime(item.created_at)}</Td>
                        <Td>
                          <Badge tone={d.tone}>{d.label}</Badge>
                        </Td>
                        <Td>{item.ledger === "earnings" ? "Earnings" : "Prepaid"}</Td>
                        <Td className={cn("text-right font-medium tabular-nums", micros > 0n && "text-emerald-700 dark:text-emerald-400")}>
                          {micros > 0n ? "+" : micros < 0n ? "−" : ""}
                          {formatUsd(micros < 0n ? -micros : micros)}
                        </Td>
                        <Td className="font-mono text-xs">
                          {item.transaction ? (
                            settings.explorerTxUrl ? (
                              <a
                                className="underline"
                                href={`${settings.explorerTxUrl}${item.transaction}`}
                                target="_blank"
                                rel="noreferrer"
                                title={item.transaction}
                              >
                                {shortHash(item.transaction)}
                              </a>
                            ) : (
                              <span title={item.transaction} aria-label={`Transaction ${item.transaction}`}>
                                {shortHash(item.transaction)}
                              </span>
                            )
                          ) : (
                            <span className="text-zinc-600 dark:text-zinc-400">—</span>
                          )}
                        </Td>
                      </tr>
                    );
                  })}
                </tbody>
              </Table>
              <LoadMore query={ledger} />
            </div>
          )
        }
      </QueryState>
    </Panel>
  );
}
