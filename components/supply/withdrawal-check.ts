"use client";

import { useQuery } from "@tanstack/react-query";
import { api } from "@/lib/browser/api";
import { walletRecord } from "@/lib/browser/wallet-record";
import type { WithdrawalList, WithdrawalView } from "@/lib/payments/schemas";

/**
 * A withdrawal whose answer was lost (the connection dropped, a 5xx, svc's `withdrawal_pending`): its Idempotency-Key,
 * kept in localStorage before the request leaves, asks svc what happened (GET /v1/supply/withdrawals?idempotency_key=),
 * and sending it again with the same key can never make a second withdrawal.
 */
export type UnconfirmedWithdrawal = { key: string; amount: string; wallet: string };

const stored = walletRecord<UnconfirmedWithdrawal>(
  "svc.withdrawal.unconfirmed.",
  (record) => /^[A-Za-z0-9._:-]{1,100}$/.test(record.key) && /^\d+(\.\d+)?$/.test(record.amount),
);
export const saveUnconfirmedWithdrawal = stored.save;
export const loadUnconfirmedWithdrawal = stored.load;
export const clearUnconfirmedWithdrawal = stored.clear;

export function newIdempotencyKey(): string {
  return `wd-${crypto.randomUUID()}`;
}

export type WithdrawalVerdict =
  | { state: "checking" }
  | { state: "confirming"; withdrawal: WithdrawalView }
  | { state: "sent"; withdrawal: WithdrawalView }
  | { state: "failed"; withdrawal: WithdrawalView }
  | { state: "not-received" };

/** Asks svc by the key every few seconds (paused offline) until the withdrawal is sent, failed, or known never received. */
export function useWithdrawalCheck(record: UnconfirmedWithdrawal | null): WithdrawalVerdict | null {
  const query = useQuery({
    queryKey: ["withdrawal-check", record?.key],
    enabled: record !== null,
    queryFn: () => api<WithdrawalList>(`/v1/supply/withdrawals?idempotency_key=${encodeURIComponent(record!.key)}`),
    refetchInterval: (q) => {
      const found = q.state.data?.data[0];
      return q.state.data && (!found || found.status !== "pending") ? false : 2_000;
    },
    retry: true,
    retryDelay: 2_000,
    gcTime: 0,
  });
  if (!record) return null;
  if (!query.data) return { state: "checking" };
  const found = query.data.data[0];
  if (!found) return { state: "not-received" };
  if (found.status === "sent") return { state: "sent", withdrawal: found };
  if (found.status === "failed") return { state: "failed", withdrawal: found };
  return { state: "confirming", withdrawal: found };
}
