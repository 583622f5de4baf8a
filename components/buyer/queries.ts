"use client";

import { useQuery } from "@tanstack/react-query";
import type { AccountProfile, DailySpend, DailySpendList, UsagePage } from "@/lib/account/schemas";
import type { ApiKeyList, ApiKeyView, CreatedApiKey } from "@/lib/auth/schemas";
import type { ModelList, ModelListing } from "@/lib/market/schemas";
import { api } from "@/lib/browser/api";

export type { AccountProfile, ApiKeyView, CreatedApiKey, DailySpend, ModelListing, UsagePage };

export const accountKey = ["account"] as const;
export const apiKeysKey = ["api-keys"] as const;
export const usageKey = ["usage"] as const;

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
