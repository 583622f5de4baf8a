"use client";

import { useEffect, useRef } from "react";
import type { MutateOptions, UseMutationResult } from "@tanstack/react-query";

/**
 * A mutation whose `mutate` runs one request at a time. `isPending` (and the disabled button it drives) reaches the
 * page a render after the click, so a double click gets its second click in before the button is disabled; this
 * guard is set synchronously by the first call, so the second is dropped. It lifts when the request settles, or
 * when the mutation stops being pending without settling here (a `reset()` while it was in flight).
 */
export function useSingleFlight<TData, TError, TVariables, TContext>(
  mutation: UseMutationResult<TData, TError, TVariables, TContext>,
): UseMutationResult<TData, TError, TVariables, TContext> {
  const inFlight = useRef<"sent" | "pending" | null>(null);
  const { isPending } = mutation;
  useEffect(() => {
    if (isPending && inFlight.current === "sent") inFlight.current = "pending";
    else if (!isPending && inFlight.current === "pending") inFlight.current = null;
  }, [isPending]);
  function mutate(variables: TVariables, options?: MutateOptions<TData, TError, TVariables, TContext>) {
    if (inFlight.current) return;
    inFlight.current = "sent";
    mutation.mutate(variables, {
      ...options,
      onSettled: (...args) => {
        inFlight.current = null;
        options?.onSettled?.(...args);
      },
    });
  }
  return { ...mutation, mutate: mutate as typeof mutation.mutate };
}
