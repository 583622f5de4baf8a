"use client";

import Link from "next/link";
import { useRefusals, type RefusalList } from "@/components/buyer/queries";
import { Badge } from "@/components/ui/badge";
import { Panel } from "@/components/ui/card";
import { EmptyState } from "@/components/ui/empty-state";
import { formatDateTime, formatInteger, plural } from "@/components/ui/format";
import { QueryState } from "@/components/ui/query-state";
import { RowCard, Table, Td, Th } from "@/components/ui/table";

export const REFUSALS_ANCHOR = "refused";

/** A refusal's reason in a few words, by its error code (the code itself is shown beside it). */
export function refusalReason(code: string): string {
  if (code === "insufficient_balance") return "Balance too low";
  if (code === "spend_limit_exceeded") return "Key's spend limit reached";
  if (code === "rate_limited") return "Rate limited";
  if (code === "no_offer_at_or_below_max") return "No offer at or below the max price";
  if (code === "no_capacity") return "No capacity left today";
  if (code === "no_healthy_supplier") return "No healthy supplier";
  if (code.startsWith("no_offer_matches_provider_")) return "Provider preferences left no offer";
  if (code.startsWith("no_offer_supports_") || code === "no_offer_fits_request") return "No offer serves what it asks";
  return "Refused";
}

type KeyRefusals = RefusalList["by_key"][number];

function Reasons({ entry }: { entry: KeyRefusals }) {
  return (
    <ul className="flex flex-col gap-1">
      {entry.reasons.map((r) => (
        <li key={r.code} className="text-sm">
          <span className="font-medium tabular-nums">{formatInteger(r.count)}×</span> {refusalReason(r.code)}{" "}
          <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">
            {r.status} {r.code}
          </span>
        </li>
      ))}
    </ul>
  );
}

/**
 * Requests the account's keys were refused (402, 429, 503) over the last 24 hours, beside the served ones: counted per
 * key by reason, then the latest minutes that had any, with what the request was told. Served requests are above.
 */
export function RefusalsPanel() {
  const query = useRefusals();
  return (
    <Panel
      id={REFUSALS_ANCHOR}
      title="Refusals"
      description="Requests your keys were refused in the last 24 hours (402, 429, 503) and why: what stopped an agent. Nothing is charged for them."
    >
      <QueryState query={query} loadingLabel="Loading refusals" errorTitle="Couldn't load refusals">
        {(data) =>
          data.total === 0 ? (
            <EmptyState title="No refused requests">None of your keys was refused a request in the last 24 hours.</EmptyState>
          ) : (
            <div className="flex flex-col gap-6">
              <Table
                caption="Refusals per key"
                cards={data.by_key.map((entry) => (
                  <RowCard
                    key={entry.key.id}
                    title={entry.key.name}
                    titleText={entry.key.name}
                    wrapTitle
                    subtitle={<span className="font-mono">{entry.key.prefix}…</span>}
                    amount={<span className="tabular-nums">{plural(entry.total, "refused", "refused")}</span>}
                    facts={[
                      { label: "Why", value: <Reasons entry={entry} /> },
                      { label: "Latest", value: formatDateTime(entry.last_at) },
                    ]}
                  />
                ))}
              >
                <thead>
                  <tr>
                    <Th>Key</Th>
                    <Th className="text-right">Refused</Th>
                    <Th>Why</Th>
                    <Th>Latest</Th>
                  </tr>
                </thead>
                <tbody>
                  {data.by_key.map((entry) => (
                    <tr key={entry.key.id}>
                      <Td className="max-w-48" title={entry.key.name}>
                        <span className="block truncate font-medium">{entry.key.name}</span>
                        <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">{entry.key.prefix}…</span>
                      </Td>
                      <Td className="text-right font-medium tabular-nums">{formatInteger(entry.total)}</Td>
                      <Td className="whitespace-normal">
                        <Reasons entry={entry} />
                      </Td>
                      <Td className="text-xs">{formatDateTime(entry.last_at)}</Td>
                    </tr>
                  ))}
                </tbody>
              </Table>
              <RecentRefusals rows={data.recent} />
            </div>
          )
        }
      </QueryState>
    </Panel>
  );
}

function RecentRefusals({ rows }: { rows: RefusalList["recent"] }) {
  return (
    <section aria-labelledby="recent-refusals-heading" className="flex flex-col gap-2">
      <h3 id="recent-refusals-heading" className="text-sm font-semibold">
        Latest refusals
      </h3>
      <Table
        caption="Latest refusals"
        cards={rows.map((r) => (
          <RowCard
            key={`${r.minute}-${r.key.id}-${r.code}`}
            title={refusalReason(r.code)}
            titleText={refusalReason(r.code)}
            wrapTitle
            subtitle={formatDateTime(r.last_at)}
            status={<Badge tone="amber">{r.status}</Badge>}
            amount={<span className="tabular-nums">{formatInteger(r.count)}×</span>}
            facts={[
              { label: "Key", value: r.key.name },
              { label: "Code", value: <span className="font-mono text-xs break-all">{r.code}</span> },
              { label: "Told", value: <span className="break-words whitespace-normal">{r.last_message}</span> },
            ]}
          />
        ))}
      >
        <thead>
          <tr>
            <Th>Time</Th>
            <Th>Key</Th>
            <Th>Refused</Th>
            <Th className="text-right">Count</Th>
            <Th>What it was told</Th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.minute}-${r.key.id}-${r.code}`}>
              <Td className="text-xs">{formatDateTime(r.last_at)}</Td>
              <Td className="max-w-40 truncate" title={r.key.name}>
                {r.key.name}
              </Td>
              <Td>
                <span className="block">
                  <Badge tone="amber">{r.status}</Badge> {refusalReason(r.code)}
                </span>
                <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">{r.code}</span>
              </Td>
              <Td className="text-right tabular-nums">{formatInteger(r.count)}</Td>
              <Td className="max-w-md text-xs whitespace-normal">{r.last_message}</Td>
            </tr>
          ))}
        </tbody>
      </Table>
      <p className="text-xs text-zinc-600 dark:text-zinc-400">
        Counted per key, minute and reason; times are UTC. An agent reads its own key&apos;s with{" "}
        <Link className="underline" href="/docs/reference#op-listRefusals">
          GET /v1/account/usage/refusals
        </Link>
        .
      </p>
    </section>
  );
}

/** A key's refusals of the last 24 hours in one line, linking to the Usage page's list; nothing when it had none. */
export function KeyRefusalsNote({ entry }: { entry: KeyRefusals | undefined }) {
  if (!entry) return null;
  const top = entry.reasons[0];
  return (
    <Link
      href={`/dashboard/usage#${REFUSALS_ANCHOR}`}
      className="text-xs whitespace-normal text-amber-800 underline decoration-amber-800/40 underline-offset-2 dark:text-amber-300"
    >
      <span className="sr-only">{entry.key.name}: </span>
      {plural(entry.total, "refused", "refused")} in 24 h{top ? ` · ${refusalReason(top.code)}` : ""}
    </Link>
  );
}
