"use client";

import { useQuery } from "@tanstack/react-query";
import type { WithdrawalList, WithdrawalView } from "@/lib/payments/schemas";
import type { CheckedOfferView, Earnings, OfferList, OfferView, UpstreamPricingView } from "@/lib/supply/schemas";
import { api } from "@/lib/browser/api";

export type { CheckedOfferView, Earnings, OfferView, UpstreamPricingView, WithdrawalView };

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
