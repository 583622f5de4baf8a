"use client";

import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import type { AccountProfile, DailySpend, DailySpendList, RefusalList, UsagePage } from "@/lib/account/schemas";
import type { ApiKeyList, ApiKeyView, CreatedApiKey } from "@/lib/auth/schemas";
import type { ModelList, ModelListing } from "@/lib/market/schemas";
import { api } from "@/lib/browser/api";

export type { AccountProfile, ApiKeyView, CreatedApiKey, DailySpend, ModelListing, RefusalList, UsagePage };

export const accountKey = ["account"] as const;
export const apiKeysKey = ["api-keys"] as const;
export const usageKey = ["usage"] as const;

/**
 * A cursor-paged list (`limit`, `cursor` → `next_cursor`) read page by page: `path` carries its query string, the
 * cursor is appended. `data` is every page's items in order.
 */
export function useCursorPages<T>(queryKey: readonly unknown[], path: string, options: { enabled?: boolean } = {}) {
  const pages = useInfiniteQuery({
    enabled: options.enabled,
    queryKey,
    queryFn: ({ pageParam }) =>
      api<{ data: T[]; next_cursor: string | null }>(`${path}${pageParam ? `&cursor=${encodeURIComponent(pageParam)}` : ""}`),
    initialPageParam: "",
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  return { ...pages, data: pages.data?.pages.flatMap((p) => p.data) };
}

export function useAccount() {
  return useQuery({ queryKey: accountKey, queryFn: () => api<AccountProfile>("/v1/account"), refetchInterval: 15_000 });
}

export function useApiKeys() {
  return useQuery({ queryKey: apiKeysKey, queryFn: () => api<ApiKeyList>("/v1/account/api-keys") });
}

export function useDailySpend(days: number) {
  return useQuery({ queryKey: ["usage-daily", days], queryFn: () => api<DailySpendList>(`/v1/account/usage/daily?days=${days}`) });
}

export function useModels() {
  return useQuery({ queryKey: ["models"], queryFn: () => api<ModelList>("/v1/models"), staleTime: 30_000 });
}

export const refusalsKey = ["refusals"] as const;

/** Requests the account's keys were refused over the last 24 hours (per key by reason, and the latest minutes). */
export function useRefusals() {
  return useQuery({
    queryKey: refusalsKey,
    queryFn: () => api<RefusalList>("/v1/account/usage/refusals?hours=24"),
    refetchInterval: 15_000,
  });
}
