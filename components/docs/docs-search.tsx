"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useId, useMemo, useState } from "react";
import { inputClass } from "@/components/ui/field";

export type DocsSearchEntry = { title: string; detail?: string; href: string; kind: "Page" | "Endpoint" | "Error code" };

/** A search box over the docs' pages, endpoints and error codes; results are links, announced as they change. */
export function DocsSearch({ entries }: { entries: DocsSearchEntry[] }) {
  const [query, setQuery] = useState("");
  const id = useId();
  const pathname = usePathname();
  const results = useMemo(() => {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    if (words.length === 0) return [];
    return entries.filter((e) => words.every((w) => `${e.title} ${e.detail ?? ""} ${e.kind}`.toLowerCase().includes(w))).slice(0, 12);
  }, [entries, query]);
  return (
    <div role="search" aria-label="Docs" className="flex flex-col gap-2">
      <label htmlFor={id} className="text-xs font-medium tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
        Search the docs
      </label>
      <input
        id={id}
        type="search"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
        placeholder="e.g. top-up, 402, api-keys"
        className={inputClass}
        autoComplete="off"
      />
      <p aria-live="polite" className="sr-only">
        {query ? `${results.length} result${results.length === 1 ? "" : "s"}` : ""}
      </p>
      {query && (
        <ul aria-label="Search results" className="flex max-h-80 flex-col gap-1 overflow-y-auto text-sm">
          {results.length === 0 ? (
            <li className="text-zinc-600 dark:text-zinc-400">Nothing matches “{query}”.</li>
          ) : (
            results.map((r) => {
              // A result on this page is a plain fragment link: the browser scrolls to it and says so (hashchange),
              // which opens a collapsed entry of the API reference; the client router would only scroll.
              const ResultLink = r.href.split("#")[0] === pathname ? "a" : Link;
              return (
                <li key={r.href + r.title}>
                  <ResultLink
                    href={r.href}
                    onClick={() => setQuery("")}
                    className="block rounded-md px-2 py-1 hover:bg-zinc-100 dark:hover:bg-zinc-800"
                  >
                    <span className="block font-medium break-words">{r.title}</span>
                    <span className="block text-xs text-zinc-600 dark:text-zinc-400">
                      {r.kind}
                      {r.detail && ` · ${r.detail}`}
                    </span>
                  </ResultLink>
                </li>
              );
            })
          )}
        </ul>
      )}
    </div>
  );
}
