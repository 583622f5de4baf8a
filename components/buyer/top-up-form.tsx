"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { erc20Abi } from "viem";
import { useReadContract, useSignTypedData } from "wagmi";
import { accountKey } from "@/components/buyer/queries";
import {
  clearUnconfirmedTopUp,
  loadUnconfirmedTopUp,
  saveUnconfirmedTopUp,
  useTopUpCheck,
  type UnconfirmedTopUp,
} from "@/components/buyer/top-up-check";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { isSessionEnded } from "@/components/ui/query-state";
import { notify } from "@/components/ui/notifications";
import { cn } from "@/components/ui/cn";
import { formatInteger, formatUsd, microsOf } from "@/components/ui/format";
import { Spinner } from "@/components/ui/spinner";
import { UsdcAmountField, useUsdcAmount } from "@/components/ui/usdc-amount-field";
import { ConnectDialog } from "@/components/wallet/connect-dialog";
import { useSettings } from "@/components/wallet/providers";
import { TransactionLink } from "@/components/wallet/transaction-link";
import { MoneyBlockAlert, useMoneyBlock } from "@/components/wallet/money-guard";
import { useOnline } from "@/components/wallet/use-online";
import { useWalletState } from "@/components/wallet/use-wallet-state";
import { ApiError } from "@/lib/browser/api";
import { describeError, isOutcomeUnknown, isUserRejection } from "@/lib/browser/errors";
import { topUpWithX402, type SentAuthorization, type TopUpStep } from "@/lib/browser/x402-payer";
import { devPaymentRefusal, isAnvilDevAccount } from "@/lib/chain/dev-wallet";

const PRESETS = ["5", "20", "100"];
const NOTICE_KEY = "top-up";
/** A preset that is the amount in the field looks pressed, not only says so (aria-pressed). */
const PRESSED =
  "aria-pressed:border-emerald-700 aria-pressed:bg-emerald-50 aria-pressed:text-emerald-900 aria-pressed:ring-2 aria-pressed:ring-emerald-700/30 dark:aria-pressed:bg-emerald-950 dark:aria-pressed:text-emerald-100";
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
 * svc's relayer submits it on Base and credits the balance once the transfer has settled. On a dev deployment only
 * the local chain's funded dev accounts are asked to sign (lib/chain/dev-wallet.ts): what is signed there is valid
 * on Base too.
 */
export function TopUpForm() {
  const settings = useSettings();
  const wallet = useWalletState();
  const online = useOnline();
  const block = useMoneyBlock({ needsWallet: true });
  const queryClient = useQueryClient();
  const { signTypedDataAsync } = useSignTypedData();
  const amount = useUsdcAmount("20", { minMicros: microsOf(settings.topUpMin), maxMicros: microsOf(settings.topUpMax) });
  const [step, setStep] = useState<TopUpStep | null>(null);
  // The amount being paid, fixed when the button was pressed (the field may change while the wallet asks).
  const [paying, setPaying] = useState<bigint | null>(null);
  const [connectOpen, setConnectOpen] = useState(false);
  const abort = useRef<AbortController | null>(null);
  // The signed authorization of the attempt in flight, once sent; a lost answer turns it into `unconfirmed`.
  const sent = useRef<UnconfirmedTopUp | null>(null);
  const [unconfirmed, setUnconfirmed] = useState<UnconfirmedTopUp | null>(null);
  const verdict = useTopUpCheck(unconfirmed);
  const checking = verdict?.state === "checking";
  const sessionWallet = wallet.session.data?.address ?? null;
  // After a reload (or a return to this page), a payment whose answer was lost is asked about again, never re-offered.
  useEffect(() => {
    if (!sessionWallet) return;
    const stored = loadUnconfirmedTopUp(sessionWallet);
    if (stored) setUnconfirmed((current) => current ?? stored);
  }, [sessionWallet]);
  const finalState = verdict && verdict.state !== "checking" ? verdict.state : null;
  const clearAmount = useRef(amount.clear);
  clearAmount.current = amount.clear;
  useEffect(() => {
    if (!finalState || !unconfirmed) return;
    clearUnconfirmedTopUp(unconfirmed.wallet);
    // Added: the amount is paid, so the button no longer offers to pay it again.
    if (finalState === "added") clearAmount.current();
    void queryClient.invalidateQueries({ queryKey: accountKey });
  }, [finalState, unconfirmed, queryClient]);
  // Whether this form is still on the page: a top-up that ends after the user moved on says so in the notifications.
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const walletUsdc = useReadContract({
    address: settings.usdcAddress,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: wallet.address ? [wallet.address] : undefined,
    chainId: settings.chainId,
    query: { enabled: !!wallet.address && !wallet.wrongChain },
  });
  const held = block === null ? walletUsdc.data : undefined;
  // A dev account's refusal waits for its balance; any other wallet is refused at once, whatever it holds.
  const devRefusal =
    settings.devChain && block === null && wallet.address && (walletUsdc.status !== "pending" || !isAnvilDevAccount(wallet.address))
      ? devPaymentRefusal(wallet.address, walletUsdc.status === "success" ? walletUsdc.data : null)
      : null;
  const short = !devRefusal && held !== undefined && amount.micros !== null && amount.micros > held;

  const topUp = useMutation({
    // Offline, a paused mutation would resume on reconnect and open the wallet for a payment nobody re-confirmed:
    // it runs now or fails now, and the form is blocked while offline.
    networkMode: "always",
    mutationFn: async (value: { amount: string; micros: bigint; signal: AbortSignal }) => {
      // Never ask for a signature the chain will refuse: the wallet's balance, read now, must cover the amount.
      const fresh = await walletUsdc.refetch();
      // On a dev deployment, nothing a real wallet could sign: only a dev account whose test USDC was just read.
      const refusal = settings.devChain ? devPaymentRefusal(wallet.address!, fresh.status === "success" ? fresh.data : null) : null;
      if (refusal) throw new ApiError(0, "dev_wallet_refused", `${refusal} Nothing was signed.`);
      if (fresh.data !== undefined && fresh.data < value.micros) {
        throw new ApiError(
          0,
          "wallet_insufficient_usdc",
          `Your wallet holds ${formatUsd(fresh.data)} USDC, less than ${formatUsd(value.micros)}. Nothing was signed.`,
        );
      }
      return topUpWithX402(
        value.amount,
        { amountMicros: value.micros, usdcAddress: settings.usdcAddress },
        {
          address: wallet.address!,
          signTypedData: (typedData) => signTypedDataAsync(typedData as Parameters<typeof signTypedDataAsync>[0]),
        },
        setStep,
        value.signal,
        (authorization: SentAuthorization) => {
          // Kept before it leaves the page: if the answer is lost, a reload still asks svc about this authorization.
          sent.current = { ...authorization, micros: value.micros.toString(), wallet: wallet.address! };
          saveUnconfirmedTopUp(sent.current);
        },
      );
    },
    onSuccess: (data) => {
      if (sent.current) clearUnconfirmedTopUp(sent.current.wallet);
      sent.current = null;
      if (mounted.current) amount.clear();
      else
        notify({
          key: NOTICE_KEY,
          tone: "success",
          title: `Top-up done: added ${formatUsd(data.credited)}`,
          body: `New balance ${formatUsd(data.balance)}.`,
        });
    },
    onError: (error, value) => {
      const lost = sent.current;
      sent.current = null;
      if (lost && isOutcomeUnknown(error)) {
        // The signed payment may have reached svc: ask it what happened instead of calling this a failure.
        if (mounted.current) setUnconfirmed(lost);
        else
          notify({
            key: NOTICE_KEY,
            tone: "info",
            title: `Top-up of ${formatUsd(value.micros)}: checking with svc`,
            body: "The connection dropped after your signed payment was sent. Open the dashboard to see whether it was added; don't pay again until then.",
          });
        return;
      }
      if (lost) clearUnconfirmedTopUp(lost.wallet);
      if (mounted.current || value.signal.aborted) return;
      notify({ key: NOTICE_KEY, tone: "error", title: `Top-up of ${formatUsd(value.micros)} failed`, body: describeError(error) });
    },
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: accountKey });
      void walletUsdc.refetch();
    },
  });

  // Leaving the page mid-payment: the notification area says it is still going (and then how it ended).
  const pendingRef = useRef<{ pending: boolean; micros: bigint | null }>({ pending: false, micros: null });
  pendingRef.current = { pending: topUp.isPending, micros: paying };
  useEffect(
    () => () => {
      const { pending, micros } = pendingRef.current;
      if (pending && micros !== null)
        notify({
          key: NOTICE_KEY,
          tone: "info",
          title: `Top-up of ${formatUsd(micros)} in progress…`,
          body: "You'll see here when it is done.",
        });
    },
    [],
  );

  const cancelled = topUp.isError && topUp.variables?.signal.aborted === true;
  // Signed out under the form: the page's notice says so and holds "Sign in again"; a failed step here would only repeat it.
  // Declining in the wallet is a choice, not a failure: nothing was signed, and the form says so calmly.
  const declined = topUp.isError && !cancelled && isUserRejection(topUp.error);
  // A wallet found short when the payment was about to be signed: the warning above the button already says so, once.
  const drained = topUp.isError && topUp.error instanceof ApiError && topUp.error.code === "wallet_insufficient_usdc" && short;
  const failed = topUp.isError && !cancelled && !declined && !drained && !isSessionEnded(topUp.error) && unconfirmed === null;
  // After a top-up that did not happen, focus returns to the button (it was disabled while paying, which sent focus to <body>).
  const submitRef = useRef<HTMLButtonElement>(null);
  const ended = declined || failed || drained || cancelled;
  useEffect(() => {
    if (!ended) return;
    const active = document.activeElement;
    if (!active || active === document.body) submitRef.current?.focus();
  }, [ended]);
  // Before the signed authorization is sent, stopping costs nothing; after, the transfer is svc's to finish.
  const cancellable = topUp.isPending && step !== "settling";
  const canPay = block === null && !short && !devRefusal && amount.micros !== null && !checking;

  function submit(event: FormEvent) {
    event.preventDefault();
    amount.touch();
    if (amount.problem || amount.micros === null || !canPay) return;
    topUp.reset();
    setUnconfirmed(null);
    setStep(null);
    setPaying(amount.micros);
    abort.current = new AbortController();
    topUp.mutate({ amount: amount.value, micros: amount.micros, signal: abort.current.signal });
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
          disabled={topUp.isPending || checking}
        />
        <div className="flex gap-2 sm:pt-7" role="group" aria-label="Preset amounts">
          {PRESETS.map((preset) => (
            <Button
              key={preset}
              variant="secondary"
              size="md"
              className={PRESSED}
              disabled={topUp.isPending || checking}
              aria-pressed={amount.value === preset}
              onClick={() => amount.setValue(preset)}
            >
              ${preset}
            </Button>
          ))}
        </div>
      </div>

      {block === "not-connected" ? (
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
      ) : block === "offline" && (topUp.isPending || checking) ? null : block ? (
        <MoneyBlockAlert block={block} what="top-up" />
      ) : (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Paying from <span className="font-mono break-all">{wallet.address}</span>
          {held !== undefined && <> · holds {formatUsd(held)} USDC</>}
        </p>
      )}

      {devRefusal && (
        <Alert tone="warning" title="Use a dev account to pay on this dev deployment">
          {devRefusal}
        </Alert>
      )}

      {short && (
        <Alert
          tone="warning"
          title="Not enough USDC in your wallet"
          actions={
            held >= microsOf(settings.topUpMin) && (
              <Button size="sm" variant="secondary" onClick={() => amount.setValue(trimMicros(held))}>
                Top up {formatUsd(held)} instead
              </Button>
            )
          }
        >
          Your wallet holds {formatUsd(held)} USDC, less than {formatUsd(amount.micros!)}: the transfer would fail, so svc won&apos;t ask
          you to sign it.
          {held < microsOf(settings.topUpMin) && <> Add USDC on Base to this wallet first.</>}
        </Alert>
      )}

      <div className="flex flex-wrap items-center gap-2">
        <Button ref={submitRef} type="submit" loading={topUp.isPending} disabled={!canPay}>
          {topUp.isPending ? "Topping up…" : `Top up ${amount.micros === null ? "" : formatUsd(amount.micros)}`.trim()}
        </Button>
        {cancellable && (
          <Button variant="secondary" onClick={() => abort.current?.abort()}>
            Cancel top-up
          </Button>
        )}
        {amount.micros !== null && canPay && !topUp.isPending && (
          <p className="basis-full text-xs text-zinc-600 dark:text-zinc-400">
            Your wallet will ask you to sign a transfer of exactly {formatUsd(amount.micros)} USDC; that is what your balance is credited.
          </p>
        )}
      </div>

      {topUp.isPending && !online && (
        <Alert tone="warning" title="You're offline">
          {cancellable
            ? "The top-up can't continue until you're back online. Cancel it: nothing has been signed or charged."
            : "Your signed payment was sent before the connection dropped. If it settled, your balance is credited; check it once you're back online before paying again."}
        </Alert>
      )}

      {(topUp.isPending || failed) && step && (
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

      {verdict?.state === "checking" && unconfirmed && (
        <Alert tone="info" title={`Checking your top-up of ${formatUsd(BigInt(unconfirmed.micros))}…`}>
          <span className="flex items-start gap-2">
            <Spinner />
            <span>
              {verdict.received
                ? "svc has your signed payment and is confirming the transfer on Base; it is added to your balance once confirmed."
                : online
                  ? "Your signed payment was sent before the answer was lost; svc is being asked what happened to it."
                  : "Your signed payment was sent before the connection dropped. This is checked with svc as soon as you're back online."}{" "}
              Don&apos;t pay again: a new top-up can start once svc says whether this one was charged.
            </span>
          </span>
        </Alert>
      )}
      {verdict?.state === "added" && (
        <Alert tone="success" title={`Added ${formatUsd(microsOf(verdict.status.amount!))} to your balance`}>
          <span className="flex flex-col gap-2">
            <span>svc received your signed payment and credited it; the answer was only lost on the way back.</span>
            {verdict.status.transaction && <TransactionLink hash={verdict.status.transaction} />}
          </span>
        </Alert>
      )}
      {verdict?.state === "not-charged" && unconfirmed && (
        <Alert tone="info" title={`Top-up of ${formatUsd(BigInt(unconfirmed.micros))} not charged`}>
          {verdict.status.status === "failed"
            ? "svc received the payment but the transfer did not go through: nothing was charged or credited."
            : "svc never received the signed payment, and it has expired: nothing can be charged for it."}{" "}
          Press Top up to try again.
        </Alert>
      )}
      {declined && (
        <Alert tone="info" title="Signature declined">
          You declined the payment in your wallet: nothing was signed or charged. Press Top up when you&apos;re ready.
        </Alert>
      )}
      {cancelled && (
        <Alert tone="info" title="Top-up cancelled">
          Nothing was charged: no signed payment was sent. Press Top up again when you&apos;re ready.
        </Alert>
      )}
      {failed && (
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

/** Micro-USDC as the shortest decimal string the amount field takes ("2", "2.5", "2.000001"). */
function trimMicros(micros: bigint): string {
  const whole = micros / 1_000_000n;
  const fraction = (micros % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : String(whole);
}
