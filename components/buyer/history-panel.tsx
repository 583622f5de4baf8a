"use client";

import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { createContext, Fragment, useContext, useState, type ReactNode } from "react";
import { useCursorPages } from "@/components/buyer/queries";
import { useOffers } from "@/components/supply/queries";
import { Badge } from "@/components/ui/badge";
import { Button, buttonClass } from "@/components/ui/button";
import { Panel } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { EmptyState } from "@/components/ui/empty-state";
import { decimalsNeeded, formatDateTime, formatDay, formatUsdFixed, microsOf, plural, shortHash } from "@/components/ui/format";
import { LoadMore, QueryState } from "@/components/ui/query-state";
import { Table, Td, Th } from "@/components/ui/table";
import { Term } from "@/components/ui/term";
import { useSettings } from "@/components/wallet/providers";
import { LEDGER_TYPES, type LedgerItem, type LedgerType } from "@/lib/ledger/schemas";

const PAGE = 50;
const GROUP_PAGE = 100;
export const ledgerKey = ["ledger"] as const;

const FILTERS: { id: LedgerType | "all"; label: string }[] = [
  { id: "all", label: "Everything" },
  { id: "topup", label: "Top-ups" },
  { id: "withdrawal", label: "Withdrawals" },
  { id: "usage", label: "Usage" },
  { id: "earnings", label: "Earnings" },
];

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The filter as the URL holds it (`?type=&from=&to=`), so it survives Back and reload; anything else is ignored. */
type Filter = { type?: LedgerType; from?: string; to?: string };

function readFilter(params: URLSearchParams): Filter {
  const type = params.get("type");
  const from = params.get("from");
  const to = params.get("to");
  return {
    ...(type && (LEDGER_TYPES as readonly string[]).includes(type) ? { type: type as LedgerType } : {}),
    ...(from && DAY.test(from) ? { from } : {}),
    ...(to && DAY.test(to) ? { to } : {}),
  };
}

function filterQuery(filter: Filter & { offer?: string; model?: string }): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filter)) if (value) params.set(name, value);
  return params.toString();
}

/** What a ledger line is, in words, from this account's point of view. */
function describe(item: LedgerItem): { label: string; tone: "green" | "neutral" | "amber" | "sky" } {
  switch (item.kind) {
    case "topup":
      return { label: "Top-up", tone: "green" };
    case "withdrawal":
      return { label: "Withdrawal", tone: "sky" };
    case "withdrawal_reversal":
      return { label: "Withdrawal returned", tone: "amber" };
    case "probe":
      return { label: "Probe paid", tone: "green" };
    case "clear":
      return item.ledger === "earnings" ? { label: "Earned", tone: "green" } : { label: "Spent", tone: "neutral" };
  }
}

const isRequestLine = (item: LedgerItem) => item.kind === "clear" || item.kind === "probe";

/**
 * One number of decimals for the amount and balance columns (policy 3), for the rows and the lines they open alike:
 * six when requests are listed (a request moves fractions of a cent, and so do the balances after them), else as
 * many as the most precise figure needs.
 */
const Places = createContext(6);
function columnPlaces(items: LedgerItem[]): number {
  if (items.some(isRequestLine)) return 6;
  return Math.max(2, ...items.flatMap((i) => [decimalsNeeded(microsOf(i.amount)), decimalsNeeded(microsOf(i.balance_after))]));
}
const groupKey = (item: LedgerItem) => `${item.kind}:${item.ledger}:${item.created_at.slice(0, 10)}:${item.offer ?? item.model ?? ""}`;

/** What the table and the phone cards both show of an item: its label, its group key, and whether it is an open group. */
function itemView(item: LedgerItem, expanded: ReadonlySet<string>) {
  const key = groupKey(item);
  const grouped = isRequestLine(item) && item.count > 1;
  return { d: describe(item), key, grouped, open: grouped && expanded.has(key) };
}

/**
 * Every movement of this account's money (GET /v1/account/ledger?group=day): top-ups and withdrawals one by one with
 * their Base transaction, a day's requests as one row per offer (earnings) or model (spending) that opens to its
 * lines, and after each the balance it left, from the ledger. Filter and range live in the URL; the CSV is the
 * ledger's lines for the same filter. Amounts are exact and signed: + credits you.
 */
export function HistoryPanel() {
  const router = useRouter();
  const pathname = usePathname();
  const search = useSearchParams();
  const filter = readFilter(new URLSearchParams(search.toString()));
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const query = filterQuery(filter);
  const rangeProblem = filter.from && filter.to && filter.from > filter.to ? "The range ends before it starts." : null;
  const ledger = useCursorPages<LedgerItem>(
    [...ledgerKey, "grouped", query],
    `/v1/account/ledger?group=day&limit=${PAGE}${query ? `&${query}` : ""}`,
    { enabled: !rangeProblem },
  );

  function setFilter(next: Filter) {
    const q = filterQuery(next);
    router.replace(q ? `${pathname}?${q}` : pathname, { scroll: false });
  }
  function toggle(key: string) {
    setExpanded((open) => {
      const next = new Set(open);
      if (!next.delete(key)) next.add(key);
      return next;
    });
  }

  return (
    <Panel
      title="History"
      description={
        <>
          Every movement of your money, newest first: top-ups and withdrawals with their transaction on Base, and each day&apos;s requests (
          <Term term="clear">clears</Term>) you paid for or served, per model or offer. + credits you, − debits you; the balance is the one
          each movement left.
        </>
      }
    >
      <div className="mb-4 flex flex-col gap-3">
        <div role="group" aria-label="Show" className="flex flex-wrap gap-2">
          {FILTERS.map((f) => {
            const pressed = (filter.type ?? "all") === f.id;
            return (
              <Button
                key={f.id}
                variant="secondary"
                size="sm"
                aria-pressed={pressed}
                onClick={() => setFilter({ ...filter, type: f.id === "all" ? undefined : f.id })}
                className={cn(
                  pressed &&
                    "border-emerald-700 bg-emerald-50 text-emerald-900 ring-1 ring-emerald-700 dark:bg-emerald-950 dark:text-emerald-100",
                )}
              >
                {f.label}
              </Button>
            );
          })}
        </div>
        <div className="flex flex-wrap items-end gap-3">
          <DateField label="From (UTC)" value={filter.from} onChange={(from) => setFilter({ ...filter, from })} />
          <DateField label="To (UTC)" value={filter.to} onChange={(to) => setFilter({ ...filter, to })} />
          {(filter.from || filter.to) && (
            <Button variant="ghost" size="sm" onClick={() => setFilter({ type: filter.type })}>
              All dates
            </Button>
          )}
          <a
            className={buttonClass("secondary", "sm", "sm:ml-auto")}
            href={`/v1/account/ledger/export${query ? `?${query}` : ""}`}
            download
          >
            Download CSV
          </a>
        </div>
        {rangeProblem && (
          <p role="alert" className="text-sm text-red-700 dark:text-red-300">
            {rangeProblem}
          </p>
        )}
      </div>
      {!rangeProblem && (
        <QueryState query={ledger} loadingLabel="Loading your history" errorTitle="Couldn't load your history">
          {(rows) =>
            rows.length === 0 ? (
              <EmptyState title={query ? "Nothing matches" : "Nothing here yet"}>
                {query ? "No movements of this kind in this range." : "Top-ups, withdrawals and requests show up here as they happen."}
              </EmptyState>
            ) : (
              <Places.Provider value={columnPlaces(rows)}>
                <div className="flex flex-col gap-4">
                  <HistoryTable items={rows} expanded={expanded} onToggle={toggle} />
                  <HistoryCards items={rows} expanded={expanded} onToggle={toggle} />
                  <LoadMore query={ledger} />
                </div>
              </Places.Provider>
            )
          }
        </QueryState>
      )}
    </Panel>
  );
}

function DateField({ label, value, onChange }: { label: string; value?: string; onChange: (day: string | undefined) => void }) {
  return (
    <label className="flex flex-col gap-1 text-xs font-medium text-zinc-700 dark:text-zinc-300">
      {label}
      <input
        type="date"
        value={value ?? ""}
        onChange={(e) => onChange(DAY.test(e.target.value) ? e.target.value : undefined)}
        className="h-8 rounded-md border border-zinc-300 bg-white px-2 text-sm text-zinc-900 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100"
      />
    </label>
  );
}

type ListProps = { items: LedgerItem[]; expanded: ReadonlySet<string>; onToggle: (key: string) => void };

/** Who a request line is about: the offer of yours that earned it, or the model you bought. */
function useSubject(): (item: LedgerItem) => string {
  const offers = useOffers();
  return (item) => {
    if (item.offer) {
      const offer = offers.data?.data.find((o) => o.id === item.offer);
      if (!offer) return `your offer ${item.offer.slice(0, 8)}`;
      return `your ${offer.price_cents}¢ offer (${offer.models.map((m) => m.id).join(", ")})${offer.status === "withdrawn" ? ", delisted" : ""}`;
    }
    return item.model ?? "";
  };
}

function whatText(item: LedgerItem, subject: string): string {
  if (!isRequestLine(item)) return "";
  const what = item.kind === "probe" ? plural(item.count, "probe") : plural(item.count, "request");
  return `${what} · ${subject}`;
}

function Amount({ item, className }: { item: LedgerItem; className?: string }) {
  const places = useContext(Places);
  const micros = microsOf(item.amount);
  return (
    <span className={cn("font-medium whitespace-nowrap tabular-nums", micros > 0n && "text-emerald-700 dark:text-emerald-400", className)}>
      {micros > 0n ? "+" : micros < 0n ? "−" : ""}
      {formatUsdFixed(micros < 0n ? -micros : micros, places)}
    </span>
  );
}

/**
 * The balance a line left. A day's group of requests has none of its own: its lines interleave in time with other
 * rows, so a balance on it would not follow from the row below; each of its lines shows the balance it left.
 */
function BalanceAfter({ item }: { item: LedgerItem }) {
  const places = useContext(Places);
  if (isRequestLine(item) && item.count > 1) {
    return (
      <span className="text-zinc-600 dark:text-zinc-400" title="Open the row: each request shows the balance it left">
        <span aria-hidden="true">—</span>
        <span className="sr-only">on each request</span>
      </span>
    );
  }
  return (
    <span className="whitespace-nowrap tabular-nums">
      {formatUsdFixed(item.balance_after, places)}{" "}
      <span className="text-xs text-zinc-600 dark:text-zinc-400">{item.ledger === "earnings" ? "earnings" : "prepaid"}</span>
    </span>
  );
}

function Transaction({ hash }: { hash: string | null }) {
  const settings = useSettings();
  if (!hash) return <span className="text-zinc-600 dark:text-zinc-400">—</span>;
  return settings.explorerTxUrl ? (
    <a className="font-mono text-xs underline" href={`${settings.explorerTxUrl}${hash}`} target="_blank" rel="noreferrer" title={hash}>
      {shortHash(hash)}
    </a>
  ) : (
    <span className="font-mono text-xs" title={hash} aria-label={`Transaction ${hash}`}>
      {shortHash(hash)}
    </span>
  );
}

function ToggleButton({ item, open, onToggle, subject }: { item: LedgerItem; open: boolean; onToggle: () => void; subject: string }) {
  return (
    <button
      type="button"
      aria-expanded={open}
      onClick={onToggle}
      className="inline-flex items-center gap-1 rounded text-left text-sm underline-offset-2 hover:underline"
    >
      <span aria-hidden="true" className="inline-block w-3 text-xs">
        {open ? "▾" : "▸"}
      </span>
      {whatText(item, subject)}
    </button>
  );
}

/** Desktop: one table row per item; a day's requests open into their lines below. */
function HistoryTable({ items, expanded, onToggle }: ListProps) {
  const subject = useSubject();
  return (
    <div className="hidden md:block">
      <Table caption="Money history">
        <thead>
          <tr>
            <Th>Date</Th>
            <Th>What</Th>
            <Th className="text-right">Amount</Th>
            <Th className="text-right">Balance after</Th>
            <Th>Transaction</Th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => {
            const { d, key, grouped, open } = itemView(item, expanded);
            return (
              <Fragment key={`${item.id}-${item.ledger}`}>
                <tr>
                  <Td className="whitespace-nowrap text-zinc-600 dark:text-zinc-400">
                    {grouped ? `${formatDay(item.created_at.slice(0, 10))} (UTC day)` : formatDateTime(item.created_at)}
                  </Td>
                  <Td>
                    <div className="flex flex-wrap items-center gap-2">
                      <Badge tone={d.tone}>{d.label}</Badge>
                      {grouped ? (
                        <ToggleButton item={item} open={open} onToggle={() => onToggle(key)} subject={subject(item)} />
                      ) : (
                        isRequestLine(item) && <span className="text-sm">{whatText(item, subject(item))}</span>
                      )}
                    </div>
                  </Td>
                  <Td className="text-right">
                    <Amount item={item} />
                  </Td>
                  <Td className="text-right">
                    <BalanceAfter item={item} />
                  </Td>
                  <Td>
                    <Transaction hash={item.transaction} />
                  </Td>
                </tr>
                {open && (
                  <GroupLines
                    group={item}
                    status={(node) => (
                      <tr>
                        <td colSpan={5} role="status" className="py-2 pl-6 text-sm text-zinc-600 dark:text-zinc-400">
                          {node}
                        </td>
                      </tr>
                    )}
                  >
                    {(lines) =>
                      lines.map((line) => (
                        <tr key={`${line.id}-${line.ledger}`} className="bg-zinc-50 dark:bg-zinc-900/60">
                          <Td className="pl-8 whitespace-nowrap text-zinc-600 sm:pl-6 dark:text-zinc-400">
                            {formatDateTime(line.created_at)}
                          </Td>
                          <Td className="text-sm text-zinc-600 dark:text-zinc-400">{line.model}</Td>
                          <Td className="text-right">
                            <Amount item={line} />
                          </Td>
                          <Td className="text-right">
                            <BalanceAfter item={line} />
                          </Td>
                          <Td />
                        </tr>
                      ))
                    }
                  </GroupLines>
                )}
              </Fragment>
            );
          })}
        </tbody>
      </Table>
    </div>
  );
}

/** Phones: one card per item, kind and amount on the first line, always visible; no sideways scroll. */
function HistoryCards({ items, expanded, onToggle }: ListProps) {
  const subject = useSubject();
  return (
    <ul aria-label="Money history" className="flex flex-col gap-2 md:hidden">
      {items.map((item) => {
        const { d, key, grouped, open } = itemView(item, expanded);
        return (
          <li key={`${item.id}-${item.ledger}`} className="rounded-lg border border-zinc-200 p-3 dark:border-zinc-800">
            <div className="flex items-center justify-between gap-2">
              <Badge tone={d.tone}>{d.label}</Badge>
              <Amount item={item} className="text-base" />
            </div>
            <div className="mt-1.5 flex flex-wrap items-baseline justify-between gap-x-3 gap-y-1 text-sm">
              <span className="text-zinc-600 dark:text-zinc-400">
                {grouped ? formatDay(item.created_at.slice(0, 10)) : formatDateTime(item.created_at)}
              </span>
              {!(isRequestLine(item) && item.count > 1) && (
                <span>
                  <span className="text-xs text-zinc-600 dark:text-zinc-400">Balance after </span>
                  <BalanceAfter item={item} />
                </span>
              )}
            </div>
            {item.transaction && (
              <div className="mt-1 text-sm">
                <Transaction hash={item.transaction} />
              </div>
            )}
            {isRequestLine(item) && (
              <div className="mt-1.5 min-w-0 text-sm break-words">
                {grouped ? (
                  <ToggleButton item={item} open={open} onToggle={() => onToggle(key)} subject={subject(item)} />
                ) : (
                  whatText(item, subject(item))
                )}
              </div>
            )}
            {open && (
              <ul
                aria-label={`Lines of ${whatText(item, subject(item))}`}
                className="mt-2 flex flex-col divide-y divide-zinc-100 border-t border-zinc-100 dark:divide-zinc-800 dark:border-zinc-800"
              >
                <GroupLines
                  group={item}
                  status={(node) => (
                    <li role="status" className="py-1.5 text-sm text-zinc-600 dark:text-zinc-400">
                      {node}
                    </li>
                  )}
                >
                  {(lines) =>
                    lines.map((line) => (
                      <li
                        key={`${line.id}-${line.ledger}`}
                        className="flex flex-wrap items-baseline justify-between gap-x-3 py-1.5 text-sm"
                      >
                        <span className="text-zinc-600 dark:text-zinc-400">{formatDateTime(line.created_at).split(", ").pop()}</span>
                        <Amount item={line} />
                        <span className="basis-full text-right text-xs">
                          <BalanceAfter item={line} />
                        </span>
                      </li>
                    ))
                  }
                </GroupLines>
              </ul>
            )}
          </li>
        );
      })}
    </ul>
  );
}

/** The lines of a day's group, read when it is opened: the ledger filtered to that day and offer (or model). */
function GroupLines({
  group,
  status,
  children,
}: {
  group: LedgerItem;
  /** Wraps a status line (loading, failed, more) in the list's own row element. */
  status: (node: ReactNode) => ReactNode;
  children: (lines: LedgerItem[]) => ReactNode;
}) {
  const day = group.created_at.slice(0, 10);
  const query = filterQuery({
    type: group.ledger === "earnings" ? "earnings" : "usage",
    from: day,
    to: day,
    ...(group.offer ? { offer: group.offer } : { model: group.model ?? undefined }),
  });
  const lines = useCursorPages<LedgerItem>([...ledgerKey, "lines", query], `/v1/account/ledger?limit=${GROUP_PAGE}&${query}`);
  const rows = lines.data?.filter((l) => l.kind === group.kind && l.created_at <= group.created_at);
  if (lines.isPending) return status("Loading the lines…");
  if (lines.isError || !rows) return status("Couldn't load the lines.");
  return (
    <>
      {children(rows)}
      {lines.hasNextPage &&
        status(
          <Button variant="secondary" size="sm" loading={lines.isFetchingNextPage} onClick={() => lines.fetchNextPage()}>
            More lines
          </Button>,
        )}
    </>
  );
}
