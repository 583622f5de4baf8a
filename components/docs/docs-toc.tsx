"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { cn } from "@/components/ui/cn";

export type DocsTocEntry = { title: string; href: string };

/**
 * The docs' table of contents: a sidebar on wide screens; on a phone a "Contents" disclosure at the top of the
 * page (closed by default, so the page starts with what it is about).
 */
export function DocsToc({ entries }: { entries: DocsTocEntry[] }) {
  const pathname = usePathname();
  const current = entries.find((e) => e.href === pathname);
  const list = (
    <ul className="flex flex-col gap-1">
      {entries.map((e) => (
        <li key={e.href}>
          <Link
            href={e.href}
            aria-current={e.href === pathname ? "page" : undefined}
            className={cn(
              "block rounded-md px-2 py-1.5 text-sm",
              e.href === pathname
                ? "bg-zinc-100 font-medium text-zinc-900 dark:bg-zinc-800 dark:text-white"
                : "text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-white",
            )}
          >
            {e.title}
          </Link>
        </li>
      ))}
    </ul>
  );
  return (
    <>
      <nav aria-label="Docs contents" className="hidden lg:block">
        <p className="mb-2 text-xs font-medium tracking-wide text-zinc-600 uppercase dark:text-zinc-400">Contents</p>
        {list}
      </nav>
      <details className="rounded-lg border border-zinc-200 bg-white lg:hidden dark:border-zinc-800 dark:bg-zinc-900" key={pathname}>
        <summary className="cursor-pointer px-3 py-2.5 text-sm font-medium">
          Contents <span className="font-normal text-zinc-600 dark:text-zinc-400">· {current?.title ?? "Docs"}</span>
        </summary>
        <nav aria-label="Docs contents (phone)" className="border-t border-zinc-200 p-2 dark:border-zinc-800">
          {list}
        </nav>
      </details>
    </>
  );
}
