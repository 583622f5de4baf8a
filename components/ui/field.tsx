import { useId, type ComponentProps, type ReactNode } from "react";
import { cn } from "@/components/ui/cn";

export const inputClass =
  "block h-10 w-full min-w-0 rounded-lg border border-zinc-300 bg-white px-3 text-sm shadow-sm placeholder:text-zinc-500 focus:border-emerald-500 focus:ring-2 focus:ring-emerald-500/30 disabled:bg-zinc-50 aria-[invalid=true]:border-red-400 dark:border-zinc-700 dark:bg-zinc-950";

/** A labelled input with optional hint and error, wired with aria-describedby / aria-invalid. */
export function Field({
  label,
  hint,
  error,
  className,
  suffix,
  ...input
}: ComponentProps<"input"> & { label: string; hint?: ReactNode; error?: string | null; suffix?: ReactNode }) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint && hintId, error && errorId].filter(Boolean).join(" ") || undefined;
  return (
    <div className={cn("flex min-w-0 flex-col gap-1.5", className)}>
      <label htmlFor={id} className="text-sm font-medium">
        {label}
      </label>
      <div className="relative">
        <input
          id={id}
          className={cn(inputClass, suffix ? "pr-16" : undefined)}
          aria-describedby={describedBy}
          aria-invalid={error ? true : undefined}
          {...input}
        />
        {suffix && <span className="pointer-events-none absolute inset-y-0 right-3 flex items-center text-sm text-zinc-600">{suffix}</span>}
      </div>
      {hint && (
        <p id={hintId} className="text-xs text-zinc-600 dark:text-zinc-400">
          {hint}
        </p>
      )}
      {error && (
        <p id={errorId} className="text-xs font-medium text-red-600 dark:text-red-400">
          {error}
        </p>
      )}
    </div>
  );
}
