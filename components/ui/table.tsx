"use client";

import { useEffect, useId, useRef, useState, type ComponentProps, type ReactNode } from "react";
import { cn } from "@/components/ui/cn";

/**
 * A table that never widens the page: on a narrow screen it scrolls sideways inside its own box, with shadows
 * at the edge that has more and a "Scroll sideways" hint while it overflows. While it overflows the box is a
 * focusable, named group so keyboard users can scroll it too. The caption names the table for screen readers and tests.
 *
 * With `cards` (one RowCard per row), a phone gets those instead, below the md breakpoint: a list named by the same
 * caption, each card with its status and amount always in view (Stripe's and OpenRouter's pattern). The table is then
 * display:none there (out of the accessibility tree too), so a row exists once for every reader.
 */
export function Table({ caption, className, children, cards, ...props }: ComponentProps<"table"> & { caption: string; cards?: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  const [overflows, setOverflows] = useState(false);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const check = () => setOverflows(el.scrollWidth > el.clientWidth + 1);
    check();
    const observer = new ResizeObserver(check);
    observer.observe(el);
    if (el.firstElementChild) observer.observe(el.firstElementChild);
    return () => observer.disconnect();
  }, []);
  const table = (
    <div className={cn("min-w-0 flex-col gap-1", cards ? "hidden md:flex" : "flex")}>
      <div
        ref={box}
        role={overflows ? "group" : undefined}
        aria-label={overflows ? `${caption}, scrolls sideways` : undefined}
        tabIndex={overflows ? 0 : undefined}
        className="scroll-shadows relative -mx-4 overflow-x-auto overscroll-x-contain sm:mx-0"
      >
        <table className={cn("w-full min-w-full text-left text-xs sm:text-sm", className)} {...props}>
          <caption className="sr-only">{caption}</caption>
          {children}
        </table>
      </div>
      {overflows && (
        <p aria-hidden="true" className="text-right text-xs text-zinc-600 dark:text-zinc-400" data-testid="scroll-hint">
          Scroll sideways for more →
        </p>
      )}
    </div>
  );
  if (!cards) return table;
  return (
    <>
      {table}
      <ul aria-label={caption} className="flex min-w-0 flex-col gap-2 md:hidden">
        {cards}
      </ul>
    </>
  );
}

/**
 * One row of a Table as a card on a phone: its title, and on the right its amount and status (never covered, never
 * scrolled away), then the other columns as labelled facts and the row's actions. `muted` for a row that no longer
 * counts (a revoked key): greyed and dashed, its status still says why.
 */
export function RowCard({
  title,
  titleText,
  subtitle,
  amount,
  status,
  facts,
  actions,
  muted = false,
  wrapTitle = false,
}: {
  title: ReactNode;
  /** The full title, for the title attribute when it is truncated. */
  titleText?: string;
  /** A title the reader needs whole (a key's name): it wraps instead of being cut. */
  wrapTitle?: boolean;
  subtitle?: ReactNode;
  amount?: ReactNode;
  status?: ReactNode;
  facts: { label: ReactNode; value: ReactNode }[];
  actions?: ReactNode;
  muted?: boolean;
}) {
  const id = useId();
  return (
    <li
      aria-labelledby={id}
      className={cn(
        "min-w-0 rounded-lg border p-3 text-sm",
        muted
          ? "border-dashed border-zinc-300 bg-zinc-50 text-zinc-600 dark:border-zinc-700 dark:bg-zinc-950 dark:text-zinc-400"
          : "border-zinc-200 dark:border-zinc-800",
      )}
    >
      <div className={cn("flex items-start justify-between gap-3", wrapTitle && "flex-wrap")}>
        <div className={cn("flex min-w-0 flex-col gap-0.5", wrapTitle && "grow basis-40")}>
          <h3 id={id} className={cn("font-medium", wrapTitle ? "break-words" : "truncate")} title={titleText}>
            {title}
          </h3>
          {subtitle && <div className="text-xs text-zinc-600 dark:text-zinc-400">{subtitle}</div>}
        </div>
        {(amount || status) && (
          <div className={cn("flex shrink-0 flex-col items-end gap-1 text-right", wrapTitle && "ml-auto")}>
            {amount && <div className="font-semibold tabular-nums">{amount}</div>}
            {status}
          </div>
        )}
      </div>
      {facts.length > 0 && (
        <dl className="mt-2 grid grid-cols-2 gap-x-3 gap-y-1.5 text-xs">
          {facts.map((fact, i) => (
            <div key={i} className="min-w-0">
              <dt className="text-zinc-600 dark:text-zinc-400">{fact.label}</dt>
              <dd className="break-words tabular-nums">{fact.value}</dd>
            </div>
          ))}
        </dl>
      )}
      {actions && <div className="mt-3 flex flex-wrap justify-end gap-2 border-t border-zinc-100 pt-2 dark:border-zinc-800">{actions}</div>}
    </li>
  );
}

export function Th({ className, ...props }: ComponentProps<"th">) {
  return (
    <th
      scope="col"
      className={cn(
        "border-b border-zinc-200 px-2.5 py-2 text-xs font-medium tracking-wide whitespace-nowrap text-zinc-600 uppercase first:pl-4 last:pr-4 sm:px-4 sm:first:pl-0 sm:last:pr-0 dark:border-zinc-800 dark:text-zinc-400",
        className,
      )}
      {...props}
    />
  );
}

export function Td({ className, ...props }: ComponentProps<"td">) {
  return (
    <td
      className={cn(
        "border-b border-zinc-100 px-2.5 py-2.5 whitespace-nowrap first:pl-4 last:pr-4 sm:px-4 sm:first:pl-0 sm:last:pr-0 dark:border-zinc-800",
        className,
      )}
      {...props}
    />
  );
}
