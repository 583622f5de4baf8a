"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import {
  earningsKey,
  offersKey,
  useEarnings,
  useWithdrawals,
  withdrawalsKey,
  type Earnings,
  type WithdrawalView,
} from "@/components/supply/queries";
import {
  clearUnconfirmedWithdrawal,
  loadUnconfirmedWithdrawal,
  newIdempotencyKey,
  saveUnconfirmedWithdrawal,
  useWithdrawalCheck,
  type UnconfirmedWithdrawal,
} from "@/components/supply/withdrawal-check";
import { Alert } from "@/components/ui/alert";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Panel } from "@/components/ui/card";
import { Amount } from "@/components/ui/amount";
import { notify } from "@/components/ui/notifications";
import { EmptyState } from "@/components/ui/empty-state";
import { formatBps, formatDateTime, formatUsd, microsOf, shortAddress, shortHash } from "@/components/ui/format";
import { isSessionEnded, QueryState } from "@/components/ui/query-state";
import { Stat } from "@/components/ui/stat";
import { Table, Td, Th } from "@/components/ui/table";
import { UsdcAmountField, useUsdcAmount } from "@/components/ui/usdc-amount-field";
import { MoneyBlockAlert, useMoneyBlock } from "@/components/wallet/money-guard";
import { useSettings } from "@/components/wallet/providers";
import { TransactionLink } from "@/components/wallet/transaction-link";
import { useWalletState } from "@/components/wallet/use-wallet-state";
import { api } from "@/lib/browser/api";
import { describeError, isOutcomeUnknown } from "@/lib/browser/errors";

export function EarningsPanel() {
  const earnings = useEarnings();
  const settings = useSettings();
  const supplierShare = formatBps(10_000 - settings.platformFeeBps);
  return (
    <Panel
      title="Earnings"
      description={`${supplierShare} of every request your offers serve. Withdraw to your wallet as USDC on Base at any time.`}
    >
      <QueryState query={earnings} loadingLabel="Loading your earnings" errorTitle="Couldn't load your earnings">
        {(e) => (
          <div className="flex flex-col gap-6">
            <div className="grid grid-cols-2 gap-4 sm:grid-cols-3">
              <Stat label="Available to withdraw" value={<Amount value={e.available} />} className="col-span-2 sm:col-span-1" />
              <Stat label="Pending" value={<Amount value={e.pending} />} hint="Sent, awaiting confirmation" />
              <Stat label="Withdrawn" value={<Amount value={e.withdrawn} />} />
            </div>
            <div className="border-t border-zinc-100 pt-5 dark:border-zinc-800">
              <WithdrawForm earnings={e} />
            </div>
          </div>
        )}
      </QueryState>
    </Panel>
  );
}

function WithdrawForm({ earnings }: { earnings: Earnings }) {
  const settings = useSettings();
  const wallet = useWalletState();
  const queryClient = useQueryClient();
  const available = microsOf(earnings.available);
  const min = microsOf(settings.withdrawalMin);
  const amount = useUsdcAmount("", { minMicros: min, maxMicros: available });
  const block = useMoneyBlock({ needsWallet: false });
  // A withdrawal that ends after the user moved to another tab says so in the notification area.
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  const to = wallet.session.data?.address;
  // A withdrawal whose answer was lost: asked about by its Idempotency-Key (kept across a reload), never guessed.
  const [unconfirmed, setUnconfirmed] = useState<UnconfirmedWithdrawal | null>(null);
  const verdict = useWithdrawalCheck(unconfirmed);
  const checking = verdict?.state === "checking" || verdict?.state === "confirming";
  useEffect(() => {
    if (!to) return;
    const stored = loadUnconfirmedWithdrawal(to);
    if (stored) setUnconfirmed((current) => current ?? stored);
  }, [to]);
  const finalState = verdict && !checking ? verdict.state : null;
  const clearAmount = useRef(amount.clear);
  clearAmount.current = amount.clear;
  useEffect(() => {
    if (!finalState || !unconfirmed) return;
    if (finalState !== "not-received") clearUnconfirmedWithdrawal(unconfirmed.wallet);
    // Sent: the amount left, so the button no longer offers it again.
    if (finalState === "sent") clearAmount.current();
    for (const queryKey of [earningsKey, withdrawalsKey]) void queryClient.invalidateQueries({ queryKey });
  }, [finalState, unconfirmed, queryClient]);

  const withdraw = useMutation({
    // Never parked offline to fire on reconnect: the form is blocked while offline instead.
    networkMode: "always",
    mutationFn: (value: UnconfirmedWithdrawal) => {
      // Kept before it leaves: a lost answer is asked about by this key, and a resend with it is never a second withdrawal.
      saveUnconfirmedWithdrawal(value);
      return api<WithdrawalView>("/v1/supply/withdrawals", {
        method: "POST",
        body: { amount: value.amount },
        headers: { "idempotency-key": value.key },
      });
    },
    onSettled: () => {
      for (const queryKey of [earningsKey, withdrawalsKey, offersKey]) void queryClient.invalidateQueries({ queryKey });
    },
    onSuccess: (data, value) => {
      clearUnconfirmedWithdrawal(value.wallet);
      if (mounted.current) amount.clear();
      else
        notify({
          key: "withdrawal",
          tone: "success",
          title: `Withdrawal sent: ${formatUsd(data.amount)} to ${shortAddress(data.to_address)}`,
        });
    },
    onError: (error, value) => {
      if (isOutcomeUnknown(error)) {
        if (mounted.current) setUnconfirmed(value);
        return;
      }
      clearUnconfirmedWithdrawal(value.wallet);
      if (!mounted.current)
        notify({
          key: "withdrawal",
          tone: "error",
          title: `Withdrawal of ${formatUsd(microsOf(value.amount))} failed`,
          body: describeError(error),
        });
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    amount.touch();
    if (amount.problem || block !== null || checking || !to) return;
    setUnconfirmed(null);
    withdraw.reset();
    withdraw.mutate({ key: newIdempotencyKey(), amount: amount.value, wallet: to });
  }

  /** svc never received the lost request: send it again with the same key (at most one withdrawal, whatever arrives). */
  function resend() {
    if (!unconfirmed || block !== null) return;
    const again = unconfirmed;
    setUnconfirmed(null);
    withdraw.mutate(again);
  }

  return (
    <form onSubmit={submit} aria-labelledby="withdraw-heading" className="flex flex-col gap-4" noValidate>
      <div>
        <h3 id="withdraw-heading" className="font-semibold">
          Withdraw
        </h3>
        <p className="mt-0.5 text-sm text-zinc-600 dark:text-zinc-400">
          Sent on Base to your signed-in wallet
          {to && (
            <>
              {" "}
              <span className="font-mono">{shortAddress(to)}</span>
            </>
          )}
          . svc pays the gas.
        </p>
      </div>
      {available < min ? (
        <p className="text-sm text-zinc-600">Nothing to withdraw yet: the smallest withdrawal is {formatUsd(settings.withdrawalMin)}.</p>
      ) : (
        <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
          <UsdcAmountField
            amount={amount}
            className="sm:max-w-56"
            disabled={withdraw.isPending || checking}
            hint={`Between ${formatUsd(settings.withdrawalMin)} and ${formatUsd(earnings.available)} (all of it)`}
          />
          <div className="flex gap-2 sm:pt-7">
            <Button
              variant="secondary"
              disabled={withdraw.isPending || checking}
              onClick={() => amount.setValue(trimDecimal(earnings.available))}
            >
              Max
            </Button>
            <Button type="submit" loading={withdraw.isPending} disabled={!amount.value || block !== null || checking}>
              {withdraw.isPending ? "Sending USDC…" : amount.micros !== null ? `Withdraw ${formatUsd(amount.micros)}` : "Withdraw"}
            </Button>
          </div>
        </div>
      )}
      {block && <MoneyBlockAlert block={block} what="withdrawal" />}
      {checking && unconfirmed && (
        <Alert tone="info" title={`Checking your withdrawal of ${formatUsd(microsOf(unconfirmed.amount))}…`}>
          {verdict?.state === "confirming"
            ? "svc received it and sent the USDC; the transfer is being confirmed on Base."
            : "The answer was lost after the request was sent; svc is being asked what happened to it."}{" "}
          Don&apos;t withdraw again until it answers.
        </Alert>
      )}
      {verdict?.state === "sent" && (
        <Alert tone="success" title={`Sent ${formatUsd(verdict.withdrawal.amount)} to ${shortAddress(verdict.withdrawal.to_address)}`}>
          {verdict.withdrawal.transaction && <TransactionLink hash={verdict.withdrawal.transaction} />}
        </Alert>
      )}
      {verdict?.state === "failed" && (
        <Alert tone="info" title={`Withdrawal of ${formatUsd(verdict.withdrawal.amount)} not sent`}>
          The transfer did not go through; the amount is back in your earnings.
        </Alert>
      )}
      {verdict?.state === "not-received" && unconfirmed && (
        <Alert
          tone="info"
          title={`Withdrawal of ${formatUsd(microsOf(unconfirmed.amount))} not received`}
          actions={
            <Button size="sm" onClick={resend} disabled={block !== null || withdraw.isPending}>
              Send it again
            </Button>
          }
        >
          svc has no record of it: nothing left your earnings. Sending it again is safe: it can only ever be withdrawn once.
        </Alert>
      )}
      {withdraw.isError && !isSessionEnded(withdraw.error) && !unconfirmed && (
        <Alert tone="error" title="Withdrawal failed">
          {describeError(withdraw.error)}
        </Alert>
      )}
      {withdraw.isSuccess && (
        <Alert tone="success" title={`Sent ${formatUsd(withdraw.data.amount)} to ${shortAddress(withdraw.data.to_address)}`}>
          {withdraw.data.transaction && <TransactionLink hash={withdraw.data.transaction} />}
        </Alert>
      )}
    </form>
  );
}

function trimDecimal(value: string): string {
  return value.includes(".") ? value.replace(/0+$/, "").replace(/\.$/, "") : value;
}

const STATUS: Record<WithdrawalView["status"], { label: string; tone: "green" | "amber" | "red" }> = {
  sent: { label: "Sent", tone: "green" },
  pending: { label: "Pending", tone: "amber" },
  failed: { label: "Failed", tone: "red" },
};

export function WithdrawalsPanel() {
  const withdrawals = useWithdrawals();
  const settings = useSettings();
  return (
    <Panel title="Withdrawals">
      <QueryState query={withdrawals} loadingLabel="Loading your withdrawals" errorTitle="Couldn't load your withdrawals">
        {({ data }) =>
          data.length === 0 ? (
            <EmptyState title="No withdrawals yet">Withdrawals you make appear here with their Base transaction.</EmptyState>
          ) : (
            <Table caption="Withdrawals">
              <thead>
                <tr>
                  <Th>Date</Th>
                  <Th className="text-right">Amount</Th>
                  <Th>Status</Th>
                  <Th>To</Th>
                  <Th>Transaction</Th>
                </tr>
              </thead>
              <tbody>
                {data.map((w) => (
                  <tr key={w.id}>
                    <Td className="text-zinc-600">{formatDateTime(w.created_at)}</Td>
                    <Td className="text-right font-medium tabular-nums">{formatUsd(w.amount)}</Td>
                    <Td>
                      <Badge tone={STATUS[w.status].tone}>{STATUS[w.status].label}</Badge>
                      {w.failure_reason && <span className="sr-only">: {w.failure_reason}</span>}
                    </Td>
                    <Td className="font-mono text-xs">{shortAddress(w.to_address)}</Td>
                    <Td className="font-mono text-xs">
                      {w.transaction ? (
                        settings.explorerTxUrl ? (
                          <a
                            className="underline"
                            href={`${settings.explorerTxUrl}${w.transaction}`}
                            target="_blank"
                            rel="noreferrer"
                            title={w.transaction}
                          >
                            {shortHash(w.transaction)}
                          </a>
                        ) : (
                          <span title={w.transaction}>{shortHash(w.transaction)}</span>
                        )
                      ) : (
                        "—"
                      )}
                    </Td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )
        }
      </QueryState>
    </Panel>
  );
}
