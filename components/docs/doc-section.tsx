import type { ReactNode } from "react";

export type TocEntry = { id: string; title: string };

/** A top-level section of the docs, anchored for the table of contents. */
export function DocSection({ id, title, lead, children }: { id: string; title: string; lead?: ReactNode; children: ReactNode }) {
  return (
    <section
      id={id}
      aria-labelledby={`${id}-title`}
      className="scroll-mt-20 border-t border-zinc-200 pt-8 first:border-t-0 first:pt-0 dark:border-zinc-800"
    >
      <h2 id={`${id}-title`} className="text-xl font-semibold tracking-tight sm:text-2xl">
        <a href={`#${id}`} className="hover:underline">
          {title}
        </a>
      </h2>
      {lead && <p className="mt-2 max-w-3xl text-zinc-600 dark:text-zinc-400">{lead}</p>}
      <div className="mt-5 flex flex-col gap-5 text-sm leading-relaxed text-zinc-700 dark:text-zinc-300">{children}</div>
    </section>
  );
}

export function SubHeading({ id, children }: { id?: string; children: ReactNode }) {
  return (
    <h3 id={id} className="scroll-mt-20 text-base font-semibold text-zinc-900 dark:text-zinc-100">
      {children}
    </h3>
  );
}

/** The sticky "On this page" list. */
export function DocsToc({ entries }: { entries: TocEntry[] }) {
  return (
    <nav aria-label="On this page" className="text-sm">
      <p className="mb-2 text-xs font-medium tracking-wide text-zinc-600 uppercase dark:text-zinc-400">On this page</p>
      <ul className="flex flex-col gap-1.5">
        {entries.map((e) => (
          <li key={e.id}>
            <a href={`#${e.id}`} className="text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-white">
              {e.title}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
