"use client";

import { useConnect, useConnectors, type Connector } from "wagmi";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { useHydrated } from "@/components/wallet/use-hydrated";
import { describeError } from "@/lib/browser/errors";

function label(connector: Connector): { name: string; hint: string } {
  if (connector.id === "injected") return { name: "Browser wallet", hint: "The wallet extension in this browser" };
  if (connector.id === "coinbaseWalletSDK") return { name: "Coinbase Wallet", hint: "Extension, mobile app or smart wallet" };
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

  return (
    <Dialog
      open={open}
      onClose={() => {
        connect.reset();
        onClose();
      }}
      title="Connect a wallet"
      description="svc runs on Base. Your wallet address is your account: no email, no password."
    >
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
                  <span aria-hidden="true" className="flex size-8 items-center justify-center rounded-md bg-zinc-100 text-sm font-semibold dark:bg-zinc-800">
                    {name.slice(0, 1)}
                  </span>
                )}
                <span className="min-w-0 flex-1">
                  <span className="block font-medium">{name}</span>
                  <span className="block truncate text-xs text-zinc-500 dark:text-zinc-400">{pending ? "Waiting for your wallet…" : hint}</span>
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
