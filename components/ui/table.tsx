import type { ComponentProps } from "react";
import { cn } from "@/components/ui/cn";

/** A horizontally scrollable table on small screens; caption names it for screen readers and tests. */
export function Table({ caption, className, children, ...props }: ComponentProps<"table"> & { caption: string }) {
  return (
    <div className="relative -mx-4 overflow-x-auto sm:mx-0">
      <table className={cn("w-full min-w-full text-left text-xs sm:text-sm", className)} {...props}>
        <caption className="sr-only">{caption}</caption>
        {children}
      </table>
    </div>
  );
}

export function Th({ className, ...props }: ComponentProps<"th">) {
  return (
    <th
      scope="col"
      className={cn("border-b border-zinc-200 px-2.5 py-2 text-xs font-medium tracking-wide whitespace-nowrap text-zinc-500 uppercase first:pl-4 last:pr-4 sm:px-4 sm:first:pl-0 sm:last:pr-0 dark:border-zinc-800 dark:text-zinc-400", className)}
      {...props}
    />
  );
}

export function Td({ className, ...props }: ComponentProps<"td">) {
  return <td className={cn("border-b border-zinc-100 px-2.5 py-2.5 whitespace-nowrap first:pl-4 last:pr-4 sm:px-4 sm:first:pl-0 sm:last:pr-0 dark:border-zinc-800", className)} {...props} />;
}
