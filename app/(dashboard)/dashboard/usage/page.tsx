import type { Metadata } from "next";
import { RefusalsPanel } from "@/components/buyer/refusals-panel";
import { SpendChartPanel } from "@/components/buyer/spend-chart";
import { UsagePanel } from "@/components/buyer/usage-table";

export const metadata: Metadata = { title: "Usage" };

export default function UsagePage() {
  return (
    <div className="flex flex-col gap-6">
      <SpendChartPanel />
      <UsagePanel />
      <RefusalsPanel />
    </div>
  );
}
