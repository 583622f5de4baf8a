import type { Metadata } from "next";
import { BalancePanel } from "@/components/buyer/balance-panel";
import { CodePanel } from "@/components/buyer/code-panel";
import { MaxPricePanel } from "@/components/buyer/max-price-form";
import { SpendByModelPanel, SpendChartPanel } from "@/components/buyer/spend-chart";

export const metadata: Metadata = { title: "Dashboard" };

export default function DashboardPage() {
  return (
    <div className="grid gap-6 lg:grid-cols-5">
      <div className="flex min-w-0 flex-col gap-6 lg:col-span-3">
        <BalancePanel />
        <SpendChartPanel />
        <SpendByModelPanel />
      </div>
      <div className="flex min-w-0 flex-col gap-6 lg:col-span-2">
        <MaxPricePanel />
        <CodePanel />
      </div>
    </div>
  );
}
