"use client";

import type { ReactNode } from "react";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { shortAddress } from "@/components/ui/format";
import { chainName } from "@/components/wallet/chain-names";
import { useSignIn } from "@/components/wallet/session";
import { SwitchChainButton } from "@/components/wallet/switch-chain-button";
import { useOnline } from "@/components/wallet/use-online";
import { useWalletState } from "@/components/wallet/use-wallet-state";
import { describeError } from "@/lib/browser/errors";

export type MoneyBlock = "signed-out" | "offline" | "not-connected" | "wrong-chain" | "other-account";

/**
 * Why a money form (top-up, withdraw) must not send right now, or null. Checked on every render, so the form
 * follows the wallet and the session as they change: a top-up needs the signed-in wallet itself (it signs the
 * payment); a withdrawal goes to the signed-in account, but a connected wallet that changed account or network
 * still stops it until the page and the wallet agree again.
 */
export function useMoneyBlock({ needsWallet }: { needsWallet: boolean }): MoneyBlock | null {
  const wallet = useWalletState();
  const online = useOnline();
  if (!wallet.signedIn) return "signed-out";
  if (!online) return "offline";
  if (!wallet.connected) return needsWallet ? "not-connected" : null;
  if (wallet.wrongChain) return "wrong-chain";
  if (wallet.mismatch) return "other-account";
  return null;
}

/** What is wrong, with the one action that fixes it (not-connected is the form's own: it opens Connect). */
export function MoneyBlockAlert({ block, what }: { block: MoneyBlock; what: "top-up" | "withdrawal" }) {
  const wallet = useWalletState();
  const signIn = useSignIn();
  const noun = what === "top-up" ? "Top-ups" : "Withdrawals";
  let body: ReactNode;
  let action: ReactNode = null;
  let title: string;
  switch (block) {
    case "signed-out":
      title = "Signed out";
      // The page's own notice (SignInGate) holds "Sign in again"; this form is paused under it.
      body = `Sign in again to make this ${what}.`;
      break;
    case "offline":
      title = "You're offline";
      body = `${noun} wait until this device is back online; nothing is sent or signed until you press the button again.`;
      break;
    case "not-connected":
      title = "No wallet connected";
      body = "Connect the wallet that holds your USDC to sign the payment.";
      break;
    case "wrong-chain":
      title = "Wrong network";
      body = `Your wallet is on ${chainName(wallet.chainId!)}. Switch it to Base to continue.`;
      action = <SwitchChainButton size="sm" />;
      break;
    case "other-account":
      title = "Your wallet changed accounts";
      body = (
        <>
          You are signed in as <span className="font-mono">{shortAddress(wallet.session.data!.address)}</span>, but your wallet is now on{" "}
          <span className="font-mono">{shortAddress(wallet.address!)}</span>. Switch your wallet back, or sign in as the new account.
          {signIn.error && <span className="mt-1 block">{describeError(signIn.error)}</span>}
        </>
      );
      action = (
        <Button size="sm" loading={signIn.isPending} onClick={() => signIn.mutate()}>
          Sign in as {shortAddress(wallet.address!)}
        </Button>
      );
      break;
  }
  return (
    <Alert tone="warning" title={title} actions={action}>
      {body}
    </Alert>
  );
}
