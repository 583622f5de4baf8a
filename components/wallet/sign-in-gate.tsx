"use client";

import { useEffect, useRef, useState, type ReactNode } from "react";
import { useDisconnect } from "wagmi";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Card } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { shortAddress } from "@/components/ui/format";
import { Paused } from "@/components/ui/paused";
import { LoadingRows } from "@/components/ui/skeleton";
import { chainName } from "@/components/wallet/chain-names";
import { ConnectDialog } from "@/components/wallet/connect-dialog";
import { useSignIn } from "@/components/wallet/session";
import { SessionEndedNotice } from "@/components/wallet/sign-in-again";
import { SwitchChainButton } from "@/components/wallet/switch-chain-button";
import { useWalletState } from "@/components/wallet/use-wallet-state";
import { describeError } from "@/lib/browser/errors";

/** Renders its children for a signed-in wallet; otherwise walks the visitor through connect → Base → sign. */
export function SignInGate({ children }: { children: ReactNode }) {
  const wallet = useWalletState();
  const wasSignedOut = useRef(false);
  // After signing in here the sign-in panel (and the focused button) is gone: focus the page's heading, so
  // keyboard and screen-reader users land on what they signed in for instead of <body>.
  useEffect(() => {
    if (!wallet.signedIn) {
      // A session that ended under the page resumes where it was (components/ui/paused.tsx), not at the heading.
      if (wallet.session.isSuccess && !wallet.endedAddress) wasSignedOut.current = true;
      return;
    }
    if (!wasSignedOut.current) return;
    wasSignedOut.current = false;
    focusHeading();
  }, [wallet.signedIn, wallet.session.isSuccess, wallet.endedAddress]);
  if (wallet.session.isPending) return <LoadingRows label="Checking your session" rows={4} />;
  if (wallet.session.isError) {
    return (
      <Alert
        tone="error"
        title="Couldn't check your session"
        actions={
          <Button variant="secondary" size="sm" onClick={() => wallet.session.refetch()}>
            Try again
          </Button>
        }
      >
        {describeError(wallet.session.error)}
      </Alert>
    );
  }
  // The same tree signed in and after the server ended the session: the page stays mounted (paused), input and all.
  if (wallet.signedIn || wallet.endedAddress) {
    return (
      <>
        {wallet.endedAddress && <SessionEndedNotice address={wallet.endedAddress} />}
        <Paused when={!wallet.signedIn}>{children}</Paused>
      </>
    );
  }
  return <SignInPanel />;
}

/** Focuses the main heading (made focusable for the purpose) once it has rendered. */
export function focusHeading() {
  requestAnimationFrame(() => {
    const heading = document.querySelector<HTMLElement>("#main h1");
    if (!heading) return;
    heading.tabIndex = -1;
    heading.focus();
  });
}

function SignInPanel() {
  const wallet = useWalletState();
  const signIn = useSignIn();
  const { disconnect } = useDisconnect();
  const [connectOpen, setConnectOpen] = useState(false);
  const step = !wallet.connected ? 1 : wallet.wrongChain ? 2 : 3;
  const listRef = useRef<HTMLOListElement>(null);
  const signInButton = useRef<HTMLButtonElement>(null);
  const lastStep = useRef(step);
  // A rejected (or failed) signature: focus returns to Sign in, where the user was, not to the page.
  useEffect(() => {
    if (signIn.isError) signInButton.current?.focus();
  }, [signIn.isError]);
  // Each step replaces the button that was pressed: move focus to the next step's action (Switch to Base,
  // Sign in), or back to Connect after a disconnect, instead of letting it fall to <body>.
  useEffect(() => {
    if (lastStep.current === step) return;
    lastStep.current = step;
    const active = document.activeElement;
    if (active && active !== document.body && listRef.current && !listRef.current.contains(active) && !active.closest("dialog")) return;
    requestAnimationFrame(() => listRef.current?.querySelector<HTMLElement>('[aria-current="step"] button:not([disabled])')?.focus());
  }, [step]);

  return (
    <Card aria-labelledby="sign-in-heading" className="mx-auto w-full max-w-xl p-5 sm:p-8">
      <h1 id="sign-in-heading" className="text-xl font-semibold tracking-tight sm:text-2xl">
        Sign in with your wallet
      </h1>
      <p className="mt-2 text-sm text-zinc-600 dark:text-zinc-400">
        Your wallet is your svc account. Signing a message proves you own it; it costs nothing and sends no transaction.
      </p>
      <ol ref={listRef} className="mt-6 flex flex-col gap-4">
        <Step n={1} current={step} title="Connect a wallet">
          {wallet.connected ? (
            <p className="flex flex-wrap items-center gap-2 text-sm">
              Connected <span className="font-mono">{shortAddress(wallet.address!)}</span>
              <Button variant="ghost" size="sm" onClick={() => disconnect()}>
                Disconnect
              </Button>
            </p>
          ) : (
            <>
              <Button disabled={!wallet.hydrated || wallet.connecting} onClick={() => setConnectOpen(true)}>
                Connect wallet
              </Button>
              <ConnectDialog open={connectOpen} onClose={() => setConnectOpen(false)} />
            </>
          )}
        </Step>
        <Step n={2} current={step} title="Use the Base network">
          {step === 2 ? (
            <div className="flex flex-col gap-2">
              <p className="text-sm text-zinc-600 dark:text-zinc-400">Your wallet is on {chainName(wallet.chainId!)}. svc runs on Base.</p>
              <SwitchChainButton />
            </div>
          ) : step > 2 ? (
            <p className="text-sm text-zinc-600 dark:text-zinc-400">On Base</p>
          ) : null}
        </Step>
        <Step n={3} current={step} title="Sign the sign-in message">
          {step === 3 && (
            <div className="flex flex-col gap-3">
              <div>
                <Button ref={signInButton} loading={signIn.isPending} onClick={() => signIn.mutate()}>
                  {signIn.isPending ? "Check your wallet…" : "Sign in"}
                </Button>
              </div>
              {signIn.error && <Alert tone="error">{describeError(signIn.error)}</Alert>}
            </div>
          )}
        </Step>
      </ol>
    </Card>
  );
}

function Step({ n, current, title, children }: { n: number; current: number; title: string; children?: ReactNode }) {
  const done = current > n;
  return (
    <li className="flex gap-3" aria-current={current === n ? "step" : undefined}>
      <span
        aria-hidden="true"
        className={cn(
          "flex size-7 shrink-0 items-center justify-center rounded-full text-sm font-semibold",
          done
            ? "bg-emerald-700 text-white"
            : current === n
              ? "bg-zinc-900 text-white dark:bg-white dark:text-zinc-900"
              : "bg-zinc-100 text-zinc-600 dark:bg-zinc-800",
        )}
      >
        {done ? "✓" : n}
      </span>
      <div className="flex min-w-0 flex-1 flex-col gap-2 pt-0.5">
        <p className={cn("font-medium", current < n && "text-zinc-500")}>
          {title}
          {done && <span className="sr-only"> (done)</span>}
        </p>
        {children}
      </div>
    </li>
  );
}
