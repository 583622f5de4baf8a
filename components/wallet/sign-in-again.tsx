"use client";

import { useEffect, useRef, useState } from "react";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { shortAddress } from "@/components/ui/format";
import { ConnectDialog } from "@/components/wallet/connect-dialog";
import { useSignIn } from "@/components/wallet/session";
import { SwitchChainButton } from "@/components/wallet/switch-chain-button";
import { useWalletState } from "@/components/wallet/use-wallet-state";
import { describeError } from "@/lib/browser/errors";

/**
 * The one action that signs this page in again: connect (when the wallet went away), switch to Base, or sign.
 * A rejected signature puts focus back on the button, not on the page.
 */
export function SignInAgainButton({ size = "md", showError = true }: { size?: "sm" | "md"; showError?: boolean }) {
  const wallet = useWalletState();
  const signIn = useSignIn();
  const [connectOpen, setConnectOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (signIn.isError) button.current?.focus();
  }, [signIn.isError]);

  if (!wallet.connected) {
    return (
      <>
        <Button size={size} disabled={!wallet.hydrated || wallet.connecting} onClick={() => setConnectOpen(true)}>
          Connect wallet
        </Button>
        <ConnectDialog open={connectOpen} onClose={() => setConnectOpen(false)} />
      </>
    );
  }
  if (wallet.wrongChain) return <SwitchChainButton size={size} />;
  const other = wallet.endedAddress && wallet.address && wallet.endedAddress.toLowerCase() !== wallet.address.toLowerCase();
  return (
    <span className="flex flex-col gap-1">
      <Button ref={button} size={size} loading={signIn.isPending} onClick={() => signIn.mutate()}>
        {signIn.isPending ? "Check your wallet…" : other ? `Sign in as ${shortAddress(wallet.address!)}` : "Sign in again"}
      </Button>
      {showError && signIn.error && (
        <span role="alert" className="text-xs text-red-700 dark:text-red-300">
          {describeError(signIn.error)}
        </span>
      )}
    </span>
  );
}

/** Above a page whose session ended under it: what happened, and the way back that keeps the page as it is. */
export function SessionEndedNotice({ address }: { address: string }) {
  const ref = useRef<HTMLDivElement>(null);
  // Focus was in the page that is now paused (or fell to <body>): bring it to the way back.
  useEffect(() => {
    requestAnimationFrame(() => {
      const active = document.activeElement;
      if (active && active !== document.body && !active.closest("[data-paused]")) return;
      ref.current?.querySelector<HTMLElement>("button:not([disabled])")?.focus();
    });
  }, []);
  return (
    <div ref={ref} className="mb-6">
      <Alert tone="warning" title="You were signed out" actions={<SignInAgainButton size="sm" />}>
        The session of {shortAddress(address)} ended on the server (it expired, or was signed out elsewhere). Sign in again to carry on:
        this page and what you entered stay as they are.
      </Alert>
    </div>
  );
}
