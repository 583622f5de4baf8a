"use client";

import { Panel } from "@/components/ui/card";
import { Amount } from "@/components/ui/amount";
import { QueryState } from "@/components/ui/query-state";
import { Stat } from "@/components/ui/stat";
import { TopUpForm } from "@/components/buyer/top-up-form";
import { useAccount } from "@/components/buyer/queries";

export function BalancePanel() {
  const account = useAccount();
  return (
    <Panel title="Balance" description="Prepaid USDC. Each request is charged from it at the price of the offer that served it.">
      {/* The page's main action comes first in the focus order (before the figures' exact-value buttons); the figures
          still read first, above it. */}
      <div className="flex flex-col gap-6">
        <div className="order-2 border-t border-zinc-100 pt-5 dark:border-zinc-800">
          <TopUpForm />
        </div>
        <div className="order-1">
          <QueryState query={account} loadingLabel="Loading your balance" errorTitle="Couldn't load your balance">
            {(a) => (
              <div className="grid grid-cols-2 gap-4 sm:grid-cols-3">
                <Stat label="Available" value={<Amount value={a.available} />} className="col-span-2 sm:col-span-1" />
                <Stat label="Held" value={<Amount value={a.held} />} hint="Reserved by requests in flight" />
                <Stat label="Total" value={<Amount value={a.balance} />} />
              </div>
            )}
          </QueryState>
        </div>
      </div>
    </Panel>
  );
}
