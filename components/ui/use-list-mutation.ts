"use client";

import { useMutation, useQueryClient, type QueryKey } from "@tanstack/react-query";
import { useSingleFlight } from "@/components/ui/use-single-flight";

/**
 * A change to something the page lists (an API key, an offer): once it succeeds, the lists under `invalidates`
 * are fetched again and `onClose` hands control back (closes the dialog). `close` also serves Cancel: it clears
 * the mutation, so a dialog opened again starts without the last error. `mutate` sends one request at a time: a
 * second click before the first answer (a double click) is dropped, not sent.
 */
export function useListMutation<TData, TVariables = void>({
  mutationFn,
  invalidates,
  onSuccess,
  onClose,
}: {
  mutationFn: (variables: TVariables) => Promise<TData>;
  invalidates: QueryKey[];
  onSuccess?: (data: TData) => void;
  onClose?: () => void;
}) {
  const queryClient = useQueryClient();
  const mutation = useSingleFlight(
    useMutation({
      mutationFn,
      onSuccess: (data) => {
        for (const queryKey of invalidates) void queryClient.invalidateQueries({ queryKey });
        onSuccess?.(data);
        if (onClose) close();
      },
    }),
  );
  function close() {
    mutation.reset();
    onClose?.();
  }
  return { mutation, close };
}
