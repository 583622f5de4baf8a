"use client";

import { useSettings } from "@/components/wallet/providers";

/** On a local stack, says plainly that the chain and the demo supplier's upstream are stand-ins. */
export function LocalStackNotice() {
  const settings = useSettings();
  if (settings.explorerTxUrl !== null) return null;
  return (
    <p
      role="note"
      className="rounded-lg border border-sky-200 bg-sky-50 px-4 py-2.5 text-xs text-sky-900 dark:border-sky-900 dark:bg-sky-950 dark:text-sky-100"
    >
      <strong>Local stack.</strong> The chain is a local Base stand-in with test USDC, and the demo supplier&apos;s offers are served by the{" "}
      <strong>reference upstream</strong>: a stand-in that answers with deterministic text, not a model.
    </p>
  );
}
