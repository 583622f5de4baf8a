import { useId, type ReactNode } from "react";
import { cn } from "@/components/ui/cn";

/**
 * A labelled figure (in a grid of them); the group is named by its label, so tests find it with getByRole("group", { name }).
 * A balance or total goes in as <Amount> (cents, exact on hover or tap: format.ts policy 1); a unit never wraps alone.
 */
export function Stat({
  label,
  value,
  unit,
  hint,
  className,
}: {
  label: string;
  value: ReactNode;
  unit?: string;
  hint?: ReactNode;
  className?: string;
}) {
  const id = useId();
  return (
    <div role="group" aria-labelledby={id} className={cn("min-w-0", className)}>
      <p id={id} className="text-xs font-medium tracking-wide text-zinc-600 uppercase dark:text-zinc-400">
        {label}
      </p>
      <p className="mt-1 text-xl font-semibold break-words tabular-nums sm:text-2xl">
        {value}
        {unit && <span className="ml-1 text-sm font-medium whitespace-nowrap text-zinc-600 dark:text-zinc-400">{unit}</span>}
      </p>
      {hint && <div className="mt-0.5 text-xs text-zinc-600 dark:text-zinc-400">{hint}</div>}
    </div>
  );
}
