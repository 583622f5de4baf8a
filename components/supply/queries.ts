"use client";

import { useQuery } from "@tanstack/react-query";
import type { WithdrawalList, WithdrawalView } from "@/lib/payments/schemas";
import type {
  CheckedOfferView,
  DailyEarnings,
  DailyEarningsList,
  Earnings,
  OfferList,
  OfferView,
  UpstreamPricingView,
} from "@/lib/supply/schemas";
import { api } from "@/lib/browser/api";

export type { CheckedOfferView, DailyEarnings, Earnings, OfferView, UpstreamPricingView, WithdrawalView };

export const offersKey = ["offers"] as const;
export const earningsKey = ["earnings"] as const;
export const withdrawalsKey = ["withdrawals"] as const;

export function useOffers() {
  return useQuery({ queryKey: offersKey, queryFn: () => api<OfferList>("/v1/supply/offers"), refetchInterval: 15_000 });
}

export function useEarnings() {
  return useQuery({ queryKey: earningsKey, queryFn: () => api<Earnings>("/v1/supply/earnings"), refetchInterval: 15_000 });
}

export function useWithdrawals() {
  return useQuery({ queryKey: withdrawalsKey, queryFn: () => api<WithdrawalList>("/v1/supply/withdrawals") });
}

export function useDailyEarnings(days: number) {
  return useQuery({
    queryKey: [...earningsKey, "daily", days],
    queryFn: () => api<DailyEarningsList>(`/v1/supply/earnings/daily?days=${days}`),
    refetchInterval: 60_000,
  });
}
