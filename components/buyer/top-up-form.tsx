"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { erc20Abi, formatUnits } from "viem";
import { useReadContract, useSignTypedData } from "wagmi";
import { accountKey } from "@/components/buyer/queries";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { cn } from "@/components/ui/cn";
import { formatInteger, formatUsd, microsOf } from "@/components/ui/format";
import { Spinner } from "@/components/ui/spinner";
import { UsdcAmountField, useUsdcAmount } from "@/components/ui/usdc-amount-field";
import { ConnectDialog } from "@/components/wallet/connect-dialog";
import { useSettings } from "@/components/wallet/providers";
import { TransactionLink } from "@/components/wallet/transaction-link";
import { SwitchChainButton } from "@/components/wallet/switch-chain-button";
import { useWalletState } from "@/components/wallet/use-wallet-state";
import { describeError } from "@/lib/browser/errors";
import { topUpWithX402, type TopUpStep } from "@/lib/browser/x402-payer";

const PRESETS = ["5", "20", "100"];
/** The steps, with the exact amount the wallet is asked to sign (the same micro-units the server checks). */
function steps(micros: bigint | null): { key: TopUpStep; label: string }[] {
  const exact = micros === null ? "the amount" : `exactly ${formatUsd(micros)} (${formatInteger(Number(micros))} USDC units)`;
  return [
    { key: "requesting", label: "Request the payment terms" },
    { key: "signing", label: `Sign the USDC authorization for ${exact} in your wallet` },
    { key: "settling", label: "Settle the transfer on Base" },
  ];
}

/**
 * Top-up over x402: the wallet signs an EIP-3009 authorization for exactly this amount (no gas, no approval);
 * svc's relayer submits it on Base and credits the balance once the transfer has settled.
 */
export function TopUpForm() {
  const settings = useSettings();
  const wallet = useWalletState();
  const queryClient = useQueryClient();
  const { signTypedDataAsync } = useSignTypedData();
  const amount = useUsdcAmount("20", { minMicros: microsOf(settings.topUpMin), maxMicros: microsOf(settings.topUpMax) });
  const [step, setStep] = useState<TopUpStep | null>(null);
  // The amount being paid, fixed when the button was pressed (the field may change while the wallet asks).
  const [paying, setPaying] = useState<bigint | null>(null);
  const [connectOpen, setConnectOpen] = useState(false);

  const walletUsdc = useReadContract({
    address: settings.usdcAddress,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: wallet.address ? [wallet.address] : undefined,
    chainId: settings.chainId,
    query: { enabled: !!wallet.address && !wallet.wrongChain },
  });

  const topUp = useMutation({
    mutationFn: () =>
      topUpWithX402(
        amount.value,
        { amountMicros: amount.micros!, usdcAddress: settings.usdcAddress },
        {
          address: wallet.address!,
          signTypedData: (typedData) => signTypedDataAsync(typedData as Parameters<typeof signTypedDataAsync>[0]),
        },
        setStep,
      ),
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: accountKey });
      void walletUsdc.refetch();
    },
  });

  const canPay = wallet.connected && !wallet.wrongChain;

  function submit(event: FormEvent) {
    event.preventDefault();
    amount.touch();
    if (amount.problem || !canPay) return;
    topUp.reset();
    setPaying(amount.micros);
    topUp.mutate();
  }

  return (
    <form onSubmit={submit} aria-labelledby="top-up-heading" className="flex flex-col gap-4" noValidate>
      <div>
        <h3 id="top-up-heading" className="font-semibold">
          Top up
        </h3>
        <p className="mt-0.5 text-sm text-zinc-600 dark:text-zinc-400">
          Pay USDC from your wallet with one signature (x402). No gas: svc submits the transfer on Base.
        </p>
      </div>
      <div className="flex flex-col gap-3 sm:flex-row sm:items-start">
        <UsdcAmountField
          amount={amount}
          hint={`Between ${formatUsd(settings.topUpMin)} and ${formatUsd(settings.topUpMax)}`}
          className="sm:max-w-56"
          disabled={topUp.isPending}
        />
        <div className="flex gap-2 sm:pt-7" role="group" aria-label="Preset amounts">
          {PRESETS.map((preset) => (
            <Button
              key={preset}
              variant="secondary"
              size="md"
              disabled={topUp.isPending}
              aria-pressed={amount.value === preset}
              onClick={() => amount.setValue(preset)}
            >
              ${preset}
            </Button>
          ))}
        </div>
      </div>

      {!wallet.connected ? (
        <Alert
          tone="info"
          actions={
            <Button size="sm" disabled={!wallet.hydrated} onClick={() => setConnectOpen(true)}>
              Connect wallet
            </Button>
          }
        >
          Connect the wallet that holds your USDC to sign the payment.
          <ConnectDialog open={connectOpen} onClose={() => setConnectOpen(false)} />
        </Alert>
      ) : wallet.wrongChain ? (
        <Alert tone="warning" actions={<SwitchChainButton size="sm" />}>
          Switch your wallet to Base to pay.
        </Alert>
      ) : (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Paying from <span className="font-mono break-all">{wallet.address}</span>
          {walletUsdc.data !== undefined && <> · holds {formatUsd(formatUnits(walletUsdc.data, 6))} USDC</>}
        </p>
      )}

      <div>
        <Button type="submit" loading={topUp.isPending} disabled={!canPay}>
          {topUp.isPending ? "Topping up…" : `Top up ${amount.micros === null ? "" : formatUsd(amount.micros)}`.trim()}
        </Button>
        {amount.micros !== null && canPay && !topUp.isPending && (
          <p className="mt-2 text-xs text-zinc-600 dark:text-zinc-400">
            Your wallet will ask you to sign a transfer of exactly {formatUsd(amount.micros)} USDC; that is what your balance is credited.
          </p>
        )}
      </div>

      {(topUp.isPending || topUp.isError) && step && (
        <ol aria-label="Top-up progress" className="flex flex-col gap-2 rounded-lg border border-zinc-200 p-3 text-sm dark:border-zinc-800">
          {steps(paying).map((s, i, all) => {
            const current = all.findIndex((x) => x.key === step);
            const state = i < current ? "done" : i === current ? (topUp.isError ? "failed" : "active") : "todo";
            return (
              <li key={s.key} className={cn("flex items-center gap-2", state === "todo" && "text-zinc-600 dark:text-zinc-400")}>
                <span aria-hidden="true" className="flex size-5 items-center justify-center">
                  {state === "active" ? <Spinner /> : state === "done" ? "✓" : state === "failed" ? "✕" : "·"}
                </span>
                {s.label}
                <span className="sr-only">({state})</span>
              </li>
            );
          })}
        </ol>
      )}

      {topUp.isError && (
        <Alert tone="error" title="Top-up failed">
          {describeError(topUp.error)}
        </Alert>
      )}
      {topUp.isSuccess && (
        <Alert tone="success" title={`Added ${formatUsd(topUp.data.credited)} to your balance`}>
          <span className="flex flex-col gap-2">
            <span>
              New available balance: <strong>{formatUsd(topUp.data.balance)}</strong>
            </span>
            <TransactionLink hash={topUp.data.transaction} />
          </span>
        </Alert>
      )}
    </form>
  );
}
