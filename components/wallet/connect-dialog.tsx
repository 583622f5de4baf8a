"use client";

import { useEffect, useState } from "react";
import { useConnect, useConnection, useConnectors, type Connector } from "wagmi";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { useHydrated } from "@/components/wallet/use-hydrated";
import { describeError } from "@/lib/browser/errors";

function label(connector: Connector): { name: string; hint: string } {
  if (connector.id === "injected") return { name: "Browser wallet", hint: "The wallet in this browser (extension or wallet app)" };
  if (connector.id === "coinbaseWalletSDK") return { name: "Coinbase Wallet", hint: "Extension, mobile app or smart wallet" };
  if (connector.id === "walletConnect")
    return { name: "WalletConnect", hint: "Scan a QR code with your phone's wallet, or open the wallet app" };
  if (connector.id === "baseAccount") return { name: "Base Account", hint: "A passkey wallet: nothing to install" };
  // A connector may describe itself (the e2e test wallet does); wallets announced over EIP-6963 were detected here.
  const description = (connector as { description?: unknown }).description;
  return { name: connector.name, hint: typeof description === "string" ? description : "Detected in this browser" };
}

/** Wallets announced over EIP-6963 first; the generic injected connector only when none announced itself. */
function orderConnectors(connectors: readonly Connector[]): Connector[] {
  const announced = connectors.filter((c) => c.type === "injected" && c.id !== "injected");
  const generic = connectors.filter((c) => c.id === "injected");
  const rest = connectors.filter((c) => c.type !== "injected" && !announced.some((a) => a.name === c.name));
  return [...announced, ...(announced.length ? [] : generic), ...rest];
}

export function ConnectDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const hydrated = useHydrated();
  const connectors = useConnectors();
  const connect = useConnect();
  const { isConnected } = useConnection();
  // Connected is done, however it happened: the opener may unmount before connect's own onSuccess runs, and a
  // dialog left "open" in its state would pop up again after the next sign-out.
  useEffect(() => {
    if (open && isConnected) onClose();
  }, [open, isConnected, onClose]);

  return (
    <Dialog
      open={open && !isConnected}
      onClose={() => {
        connect.reset();
        onClose();
      }}
      title="Connect a wallet"
      description="svc runs on Base. Your wallet address is your account: no email, no password."
    >
      <NoWalletHelp connectors={connectors} />
      <ul className="flex flex-col gap-2">
        {orderConnectors(connectors).map((connector) => {
          const { name, hint } = label(connector);
          const pending = connect.isPending && connect.variables?.connector === connector;
          return (
            <li key={connector.uid}>
              <button
                type="button"
                disabled={!hydrated || connect.isPending}
                onClick={() => connect.mutate({ connector }, { onSuccess: onClose })}
                className="flex w-full items-center gap-3 rounded-lg border border-zinc-200 px-4 py-3 text-left transition-colors hover:border-emerald-400 hover:bg-emerald-50/50 disabled:cursor-not-allowed disabled:opacity-60 dark:border-zinc-700 dark:hover:bg-emerald-950/30"
              >
                {connector.icon ? (
                  // eslint-disable-next-line @next/next/no-img-element -- wallet icons are data: URIs from EIP-6963
                  <img src={connector.icon} alt="" className="size-8 rounded-md" />
                ) : (
                  <span
                    aria-hidden="true"
                    className="flex size-8 items-center justify-center rounded-md bg-zinc-100 text-sm font-semibold dark:bg-zinc-800"
                  >
                    {name.slice(0, 1)}
                  </span>
                )}
                <span className="min-w-0 flex-1">
                  <span className="block font-medium">{name}</span>
                  <span className="block truncate text-xs text-zinc-600 dark:text-zinc-400">
                    {pending ? "Waiting for your wallet…" : hint}
                  </span>
                </span>
              </button>
            </li>
          );
        })}
      </ul>
      {connect.error && <Alert tone="error">{describeError(connect.error)}</Alert>}
      <div className="flex justify-end">
        <Button variant="ghost" onClick={onClose}>
          Cancel
        </Button>
      </div>
    </Dialog>
  );
}

/** Whether this browser has a wallet of its own (an extension, or a wallet app's built-in browser). */
function useHasInjectedWallet(connectors: readonly Connector[]): boolean | null {
  const [injected, setInjected] = useState<boolean | null>(null);
  useEffect(() => {
    setInjected(
      connectors.some((c) => c.type === "injected" && c.id !== "injected") ||
        typeof (window as { ethereum?: unknown }).ethereum !== "undefined",
    );
  }, [connectors]);
  return injected;
}

/**
 * The phone path: without a wallet in this browser, say what to do instead of failing on "Browser wallet":
 * open svc inside the wallet app's browser (with a link to copy), or use a connector that needs no extension.
 */
function NoWalletHelp({ connectors }: { connectors: readonly Connector[] }) {
  const injected = useHasInjectedWallet(connectors);
  const [copied, setCopied] = useState(false);
  if (injected !== false) return null;
  const remote = connectors
    .filter((c) => c.id === "walletConnect" || c.id === "baseAccount" || c.id === "coinbaseWalletSDK")
    .map((c) => label(c).name);
  const url = typeof window === "undefined" ? "" : window.location.href;
  return (
    <Alert tone="info" title="No wallet in this browser">
      <span className="flex flex-col gap-2">
        <span>
          On a phone, open this page in your wallet app&apos;s browser (MetaMask, Coinbase Wallet, Rainbow, Trust: the Browser tab), then
          connect there.
          {remote.length > 0 && (
            <>
              {" "}
              Or pick {remote.join(" or ")} below: {remote.length === 1 ? "it needs" : "they need"} no extension.
            </>
          )}
        </span>
        <span>
          <Button
            variant="secondary"
            size="sm"
            onClick={async () => {
              await navigator.clipboard.writeText(url).catch(() => undefined);
              setCopied(true);
            }}
          >
            <span aria-live="polite">{copied ? "Link copied" : "Copy this page's link"}</span>
          </Button>
        </span>
      </span>
    </Alert>
  );
}
