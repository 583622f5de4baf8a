"use client";

import { useQuery } from "@tanstack/react-query";
import { api } from "@/lib/browser/api";
import { walletRecord } from "@/lib/browser/wallet-record";
import type { SentAuthorization } from "@/lib/browser/x402-payer";
import type { TopUpStatusView } from "@/lib/payments/schemas";

/**
 * A top-up whose signed authorization was sent but whose answer never came back (the connection dropped, a proxy
 * answered 5xx, svc said `payment_pending`): only svc knows whether it moved money, so the form asks it by the
 * authorization's nonce, and keeps that nonce in localStorage so a reload asks again instead of offering to pay twice.
 */
export type UnconfirmedTopUp = SentAuthorization & { micros: string; wallet: string };

const stored = walletRecord<UnconfirmedTopUp>(
  "svc.top-up.unconfirmed.",
  (record) => /^0x[0-9a-fA-F]{64}$/.test(record.nonce) && Number.isFinite(record.validBefore) && /^\d+$/.test(record.micros),
);
export const saveUnconfirmedTopUp = stored.save;
export const loadUnconfirmedTopUp = stored.load;
export const clearUnconfirmedTopUp = stored.clear;

export type TopUpVerdict =
  | { state: "checking"; received: boolean }
  | { state: "added"; status: TopUpStatusView }
  | { state: "not-charged"; status: TopUpStatusView };

/** svc's answer read as the form shows it: "not_received" is final only once the authorization can no longer move money. */
export function verdictOf(record: UnconfirmedTopUp, status: TopUpStatusView | undefined): TopUpVerdict {
  if (!status) return { state: "checking", received: false };
  switch (status.status) {
    case "credited":
      return { state: "added", status };
    case "failed":
      return { state: "not-charged", status };
    case "pending":
      return { state: "checking", received: true };
    case "not_received":
      return Date.parse(status.checked_at) / 1000 > record.validBefore
        ? { state: "not-charged", status }
        : { state: "checking", received: false };
  }
}

/** Asks svc every few seconds (paused while offline, at once when back) until the verdict is final. */
export function useTopUpCheck(record: UnconfirmedTopUp | null): TopUpVerdict | null {
  const query = useQuery({
    queryKey: ["top-up-status", record?.nonce],
    enabled: record !== null,
    queryFn: () => api<TopUpStatusView>(`/v1/x402/top-up/${record!.nonce}`),
    refetchInterval: (q) => (record && verdictOf(record, q.state.data).state !== "checking" ? false : 2_000),
    refetchIntervalInBackground: true,
    retry: true,
    retryDelay: 2_000,
    gcTime: 0,
  });
  return record ? verdictOf(record, query.data) : null;
}
