"use client";

import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { shortAddress } from "@/components/ui/format";
import { chainName } from "@/components/wallet/chain-names";
import { useSignIn, useSignOut } from "@/components/wallet/session";
import { SwitchChainButton } from "@/components/wallet/switch-chain-button";
import { useWalletState } from "@/components/wallet/use-wallet-state";
import { describeError } from "@/lib/browser/errors";

/** Site-wide prompts: the wallet is on the wrong network, or is not the wallet that is signed in. */
export function WalletBanners() {
  const wallet = useWalletState();
  const signIn = useSignIn();
  const signOut = useSignOut();

  if (wallet.wrongChain) {
    return (
      <Banner>
        <Alert tone="warning" title="Wrong network" actions={<SwitchChainButton size="sm" />}>
          Your wallet is on {chainName(wallet.chainId!)}. svc runs on Base (chain id 8453): switch to sign in, top up or withdraw.
        </Alert>
      </Banner>
    );
  }
  if (wallet.mismatch) {
    return (
      <Banner>
        <Alert
          tone="warning"
          title="Your wallet changed accounts"
          actions={
            <>
              <Button size="sm" loading={signIn.isPending} onClick={() => signIn.mutate()}>
                Sign in as {shortAddress(wallet.address!)}
              </Button>
              <Button size="sm" variant="secondary" loading={signOut.isPending} onClick={() => signOut.mutate()}>
                Sign out
              </Button>
            </>
          }
        >
          You are signed in as {shortAddress(wallet.session.data!.address)}, but your wallet is now {shortAddress(wallet.address!)}.
          Payments would be signed by the wallet&apos;s account.
          {signIn.error && <span className="mt-1 block">{describeError(signIn.error)}</span>}
        </Alert>
      </Banner>
    );
  }
  return null;
}

function Banner({ children }: { children: React.ReactNode }) {
  return <div className="mx-auto w-full max-w-6xl px-4 pt-4 sm:px-6">{children}</div>;
}
