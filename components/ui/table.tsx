"use client";

import { useEffect, useRef, useState, type ComponentProps } from "react";
import { cn } from "@/components/ui/cn";

/**
 * A table that never widens the page: on a narrow screen it scrolls sideways inside its own box, with shadows
 * at the edge that has more and a "Scroll sideways" hint while it overflows. While it overflows the box is a
 * focusable, named group so keyboard users can scroll it too. The caption names the table for screen readers and tests.
 */
export function Table({ caption, className, children, ...props }: ComponentProps<"table"> & { caption: string }) {
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
  return (
    <div className="flex min-w-0 flex-col gap-1">
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
