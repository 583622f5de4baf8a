"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, type FormEvent } from "react";
import {
  earningsKey,
  offersKey,
  useEarnings,
  useWithdrawals,
  withdrawalsKey,
  type Earnings,
  type WithdrawalView,
} from "@/components/supply/queries";
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
import { describeError } from "@/lib/browser/errors";

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
  const withdraw = useMutation({
    // Never parked offline to fire on reconnect: the form is blocked while offline instead.
    networkMode: "always",
    mutationFn: (value: string) => api<WithdrawalView>("/v1/supply/withdrawals", { method: "POST", body: { amount: value } }),
    onSettled: () => {
      for (const queryKey of [earningsKey, withdrawalsKey, offersKey]) void queryClient.invalidateQueries({ queryKey });
    },
    onSuccess: (data) => {
      if (mounted.current) amount.clear();
      else
        notify({
          key: "withdrawal",
          tone: "success",
          title: `Withdrawal sent: ${formatUsd(data.amount)} to ${shortAddress(data.to_address)}`,
        });
    },
    onError: (error, value) => {
      if (!mounted.current)
        notify({
          key: "withdrawal",
          tone: "error",
          title: `Withdrawal of ${formatUsd(microsOf(value))} failed`,
          body: describeError(error),
        });
    },
  });
  const to = wallet.session.data?.address;

  function submit(event: FormEvent) {
    event.preventDefault();
    amount.touch();
    if (!amount.problem && block === null) withdraw.mutate(amount.value);
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
            disabled={withdraw.isPending}
            hint={`Between ${formatUsd(settings.withdrawalMin)} and ${formatUsd(earnings.available)} (all of it)`}
          />
          <div className="flex gap-2 sm:pt-7">
            <Button variant="secondary" disabled={withdraw.isPending} onClick={() => amount.setValue(trimDecimal(earnings.available))}>
              Max
            </Button>
            <Button type="submit" loading={withdraw.isPending} disabled={!amount.value || block !== null}>
              {withdraw.isPending ? "Sending USDC…" : amount.micros !== null ? `Withdraw ${formatUsd(amount.micros)}` : "Withdraw"}
            </Button>
          </div>
        </div>
      )}
      {block && <MoneyBlockAlert block={block} what="withdrawal" />}
      {withdraw.isError && !isSessionEnded(withdraw.error) && (
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
