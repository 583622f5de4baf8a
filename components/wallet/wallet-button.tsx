"use client";

import Link from "next/link";
import { useEffect, useRef, useState } from "react";
import { Button } from "@/components/ui/button";
import { shortAddress } from "@/components/ui/format";
import { ConnectDialog } from "@/components/wallet/connect-dialog";
import { useSignIn, useSignOut } from "@/components/wallet/session";
import { SignInAgainButton } from "@/components/wallet/sign-in-again";
import { SwitchChainButton } from "@/components/wallet/switch-chain-button";
import { useWalletState } from "@/components/wallet/use-wallet-state";

/** The header's wallet control: Connect → (Switch to Base) → Sign in → the signed-in account menu. */
export function WalletButton() {
  const wallet = useWalletState();
  const signIn = useSignIn();
  const [connectOpen, setConnectOpen] = useState(false);
  const slot = useRef<HTMLDivElement>(null);
  const shape = wallet.signedIn
    ? "account"
    : wallet.endedAddress
      ? "again"
      : wallet.connected
        ? wallet.wrongChain
          ? "switch"
          : "sign-in"
        : "connect";
  const lastShape = useRef(shape);
  // Armed by a click or key press on the control (or in its Connect dialog), so a page load that restores a
  // session does not steal focus.
  const armed = useRef(false);
  // Each state replaces the button: if focus fell to <body> with it (a wallet was picked, a sign-in finished),
  // put it on the control that replaced it.
  useEffect(() => {
    if (lastShape.current === shape) return;
    lastShape.current = shape;
    if (!armed.current) return;
    armed.current = false;
    requestAnimationFrame(() => {
      if (document.activeElement && document.activeElement !== document.body) return;
      slot.current?.querySelector<HTMLElement>("button:not([disabled])")?.focus();
    });
  }, [shape]);
  return (
    <div ref={slot} className="contents" onClickCapture={() => (armed.current = true)} onKeyDownCapture={() => (armed.current = true)}>
      <WalletControl wallet={wallet} signIn={signIn} connectOpen={connectOpen} setConnectOpen={setConnectOpen} />
    </div>
  );
}

function SignInButton({ signIn }: { signIn: ReturnType<typeof useSignIn> }) {
  const button = useRef<HTMLButtonElement>(null);
  // A rejected signature: focus returns to Sign in, not to the page.
  useEffect(() => {
    if (signIn.isError) button.current?.focus();
  }, [signIn.isError]);
  return (
    <Button ref={button} size="sm" loading={signIn.isPending} onClick={() => signIn.mutate()}>
      Sign in
    </Button>
  );
}

function WalletControl({
  wallet,
  signIn,
  connectOpen,
  setConnectOpen,
}: {
  wallet: ReturnType<typeof useWalletState>;
  signIn: ReturnType<typeof useSignIn>;
  connectOpen: boolean;
  setConnectOpen: (open: boolean) => void;
}) {
  if (wallet.signedIn) return <AccountMenu address={wallet.session.data!.address} />;
  if (wallet.endedAddress) return <SignInAgainButton size="sm" showError={false} />;
  if (wallet.connected && wallet.wrongChain) return <SwitchChainButton size="sm" label="Switch network" />;
  if (wallet.connected) return <SignInButton signIn={signIn} />;
  return (
    <>
      <Button size="sm" disabled={!wallet.hydrated || wallet.connecting} onClick={() => setConnectOpen(true)}>
        Connect wallet
      </Button>
      <ConnectDialog open={connectOpen} onClose={() => setConnectOpen(false)} />
    </>
  );
}

/**
 * The account menu, as the WAI-ARIA menu button pattern: Enter/Space/ArrowDown open it on the first item,
 * ArrowUp on the last; ArrowUp/ArrowDown/Home/End move between items; Escape closes it and returns focus to
 * the button; Tab closes it and moves on. Who is signed in is shown above the menu, outside role="menu".
 */
function AccountMenu({ address }: { address: string }) {
  const [open, setOpen] = useState(false);
  const signOut = useSignOut();
  const ref = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const menuRef = useRef<HTMLDivElement>(null);
  const [initialFocus, setInitialFocus] = useState<"first" | "last">("first");

  const items = () => Array.from(menuRef.current?.querySelectorAll<HTMLElement>('[role="menuitem"]:not([disabled])') ?? []);
  const close = (returnFocus: boolean) => {
    setOpen(false);
    if (returnFocus) buttonRef.current?.focus();
  };

  useEffect(() => {
    if (!open) return;
    const list = items();
    (initialFocus === "first" ? list[0] : list[list.length - 1])?.focus();
    const onPointer = (event: MouseEvent) => {
      if (!ref.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener("mousedown", onPointer);
    return () => document.removeEventListener("mousedown", onPointer);
  }, [open, initialFocus]);

  function onButtonKeyDown(event: React.KeyboardEvent) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      setInitialFocus(event.key === "ArrowDown" ? "first" : "last");
      setOpen(true);
    }
  }

  function onMenuKeyDown(event: React.KeyboardEvent) {
    const list = items();
    const index = list.indexOf(document.activeElement as HTMLElement);
    const move = (to: number) => {
      event.preventDefault();
      list[(to + list.length) % list.length]?.focus();
    };
    if (event.key === "ArrowDown") move(index + 1);
    else if (event.key === "ArrowUp") move(index - 1);
    else if (event.key === "Home") move(0);
    else if (event.key === "End") move(list.length - 1);
    else if (event.key === "Escape") {
      event.preventDefault();
      close(true);
    } else if (event.key === "Tab") setOpen(false);
  }

  return (
    <div ref={ref} className="relative">
      <button
        ref={buttonRef}
        type="button"
        aria-expanded={open}
        aria-haspopup="menu"
        aria-controls={open ? "account-menu" : undefined}
        title={address}
        onClick={() => {
          setInitialFocus("first");
          setOpen((o) => !o);
        }}
        onKeyDown={onButtonKeyDown}
        className="flex h-8 items-center gap-2 rounded-full border border-zinc-300 bg-white pr-3 pl-1 text-sm font-medium shadow-sm hover:bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-900 dark:hover:bg-zinc-800"
      >
        <span aria-hidden="true" className="size-6 rounded-full" style={{ background: avatarGradient(address) }} />
        <span className="sr-only">Account </span>
        <span className="font-mono text-xs">{shortAddress(address)}</span>
      </button>
      {open && (
        <div className="absolute right-0 z-30 mt-2 w-64 rounded-xl border border-zinc-200 bg-white p-2 shadow-lg dark:border-zinc-800 dark:bg-zinc-900">
          <p className="px-2 pt-1 pb-2 text-xs text-zinc-600 dark:text-zinc-400">Signed in as</p>
          <p className="px-2 pb-2 font-mono text-xs break-all" data-testid="account-address">
            {address}
          </p>
          <div className="my-1 border-t border-zinc-100 dark:border-zinc-800" />
          <div ref={menuRef} id="account-menu" role="menu" aria-label="Account" onKeyDown={onMenuKeyDown} className="flex flex-col">
            <MenuLink href="/dashboard" onNavigate={() => close(false)}>
              Dashboard
            </MenuLink>
            <MenuLink href="/supply" onNavigate={() => close(false)}>
              Supply
            </MenuLink>
            <button
              type="button"
              role="menuitem"
              tabIndex={-1}
              disabled={signOut.isPending}
              onClick={() => signOut.mutate(undefined, { onSuccess: () => setOpen(false) })}
              className="block w-full rounded-md px-2 py-1.5 text-left text-sm text-red-700 hover:bg-red-50 focus:bg-red-50 dark:text-red-300 dark:hover:bg-red-950 dark:focus:bg-red-950"
            >
              {signOut.isPending ? "Signing out…" : "Sign out"}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}

function MenuLink({ href, children, onNavigate }: { href: string; children: React.ReactNode; onNavigate: () => void }) {
  return (
    <Link
      role="menuitem"
      tabIndex={-1}
      href={href}
      onClick={onNavigate}
      className="block rounded-md px-2 py-1.5 text-sm hover:bg-zinc-100 focus:bg-zinc-100 dark:hover:bg-zinc-800 dark:focus:bg-zinc-800"
    >
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
