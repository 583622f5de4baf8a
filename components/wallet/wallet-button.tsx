"use client";

import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import { Button } from "@/components/ui/button";
import { shortAddress } from "@/components/ui/format";
import { ConnectDialog } from "@/components/wallet/connect-dialog";
import { useSignIn, useSignOut } from "@/components/wallet/session";
import { SwitchChainButton } from "@/components/wallet/switch-chain-button";
import { useWalletState } from "@/components/wallet/use-wallet-state";

/** The header's wallet control: Connect → (Switch to Base) → Sign in → the signed-in account menu. */
export function WalletButton() {
  const wallet = useWalletState();
  const signIn = useSignIn();
  const [connectOpen, setConnectOpen] = useState(false);

  if (wallet.signedIn) return <AccountMenu address={wallet.session.data!.address} />;
  if (wallet.connected && wallet.wrongChain) return <SwitchChainButton size="sm" label="Switch network" />;
  if (wallet.connected) {
    return (
      <Button size="sm" loading={signIn.isPending} onClick={() => signIn.mutate()}>
        Sign in
      </Button>
    );
  }
  return (
    <>
      <Button size="sm" disabled={!wallet.hydrated || wallet.connecting} onClick={() => setConnectOpen(true)}>
        Connect wallet
      </Button>
      <ConnectDialog open={connectOpen} onClose={() => setConnectOpen(false)} />
    </>
  );
}

function AccountMenu({ address }: { address: string }) {
  const [open, setOpen] = useState(false);
  const signOut = useSignOut();
  const ref = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    const close = (event: MouseEvent | KeyboardEvent) => {
      if (event instanceof KeyboardEvent ? event.key === "Escape" : !ref.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", close);
    document.addEventListener("keydown", close);
    return () => {
      document.removeEventListener("mousedown", close);
      document.removeEventListener("keydown", close);
    };
  }, [open]);

  return (
    <div ref={ref} className="relative">
      <button
        type="button"
        aria-expanded={open}
        aria-haspopup="menu"
        aria-label={`Account ${address}`}
        onClick={() => setOpen((o) => !o)}
        className="flex h-8 items-center gap-2 rounded-full border border-zinc-300 bg-white pr-3 pl-1 text-sm font-medium shadow-sm hover:bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-900 dark:hover:bg-zinc-800"
      >
        <span aria-hidden="true" className="size-6 rounded-full" style={{ background: avatarGradient(address) }} />
        <span className="font-mono text-xs">{shortAddress(address)}</span>
      </button>
      {open && (
        <div role="menu" aria-label="Account" className="absolute right-0 z-30 mt-2 w-64 rounded-xl border border-zinc-200 bg-white p-2 shadow-lg dark:border-zinc-800 dark:bg-zinc-900">
          <p className="px-2 pt-1 pb-2 text-xs text-zinc-500">Signed in as</p>
          <p className="px-2 pb-2 font-mono text-xs break-all">{address}</p>
          <div className="my-1 border-t border-zinc-100 dark:border-zinc-800" />
          <MenuLink href="/dashboard" onNavigate={() => setOpen(false)}>
            Dashboard
          </MenuLink>
          <MenuLink href="/supply" onNavigate={() => setOpen(false)}>
            Supply
          </MenuLink>
          <button
            type="button"
            role="menuitem"
            disabled={signOut.isPending}
            onClick={() => signOut.mutate(undefined, { onSuccess: () => setOpen(false) })}
            className="block w-full rounded-md px-2 py-1.5 text-left text-sm text-red-700 hover:bg-red-50 dark:text-red-300 dark:hover:bg-red-950"
          >
            {signOut.isPending ? "Signing out…" : "Sign out"}
          </button>
        </div>
      )}
    </div>
  );
}

function MenuLink({ href, children, onNavigate }: { href: string; children: React.ReactNode; onNavigate: () => void }) {
  return (
    <Link role="menuitem" href={href} onClick={onNavigate} className="block rounded-md px-2 py-1.5 text-sm hover:bg-zinc-100 dark:hover:bg-zinc-800">
      {children}
    </Link>
  );
}

/** A stable two-colour gradient from the address, so an account is recognisable at a glance. */
function avatarGradient(address: string): string {
  const hue = parseInt(address.slice(2, 8), 16) % 360;
  const hue2 = parseInt(address.slice(-6), 16) % 360;
  return `linear-gradient(135deg, hsl(${hue} 70% 55%), hsl(${hue2} 70% 45%))`;
}
