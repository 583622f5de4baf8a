"use client";

import { useQuery } from "@tanstack/react-query";
import type { AccountProfile } from "@/lib/account/profile";
import type { ApiKeyView } from "@/lib/auth/api-keys";
import type { ModelListing } from "@/lib/market/models";
import type { DailySpend } from "@/lib/account/usage";
import { api } from "@/lib/browser/api";

export type { AccountProfile, ApiKeyView, DailySpend, ModelListing };

export const accountKey = ["account"] as const;
export const apiKeysKey = ["api-keys"] as const;
export const usageKey = ["usage"] as const;

export function useAccount() {
  return useQuery({ queryKey: accountKey, queryFn: () => api<AccountProfile>("/v1/account"), refetchInterval: 15_000 });
}

export function useApiKeys() {
  return useQuery({ queryKey: apiKeysKey, queryFn: () => api<{ data: ApiKeyView[] }>("/v1/account/api-keys") });
}

export function useDailySpend(days: number) {
  return useQuery({ queryKey: ["usage-daily", days], queryFn: () => api<{ data: DailySpend[] }>(`/v1/account/usage/daily?days=${days}`) });
}

export function useModels() {
  return useQuery({ queryKey: ["models"], queryFn: () => api<{ data: ModelListing[] }>("/v1/models"), staleTime: 30_000 });
}
