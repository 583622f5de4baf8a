"use client";

import { CopyButton } from "@/components/ui/copy-button";
import { useSettings } from "@/components/wallet/providers";

/** An on-chain transaction hash: shown in full, copyable, and linked to Basescan when on Base mainnet. */
export function TransactionLink({ hash }: { hash: string }) {
  const settings = useSettings();
  return (
    <span className="flex flex-wrap items-center gap-2">
      <span>Transaction</span>
      <code aria-label="Transaction hash" className="font-mono text-xs break-all">
        {hash}
      </code>
      <CopyButton value={hash} label="Copy transaction hash" />
      {settings.explorerTxUrl && (
        <a className="underline" href={`${settings.explorerTxUrl}${hash}`} target="_blank" rel="noreferrer">
          View on Basescan
        </a>
      )}
    </span>
  );
}
