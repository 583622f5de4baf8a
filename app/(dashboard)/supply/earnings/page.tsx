import type { Metadata } from "next";
import { EarningsChartPanel } from "@/components/supply/earnings-chart";
import { EarningsPanel, WithdrawalsPanel } from "@/components/supply/earnings-panel";

export const metadata: Metadata = { title: "Earnings" };

export default function EarningsPage() {
  return (
    <div className="flex flex-col gap-6">
      <EarningsPanel />
      <EarningsChartPanel />
      <WithdrawalsPanel />
    </div>
  );
}
