import { SectionHeader } from "@/components/site/section-header";

const TABS = [
  { href: "/supply", label: "Offers" },
  { href: "/supply/earnings", label: "Earnings" },
];

export default function SupplyLayout({ children }: { children: React.ReactNode }) {
  return (
    <>
      <SectionHeader
        title="Supply"
        description="Sell your upstream's spare capacity and withdraw what it earns."
        tabs={TABS}
        tabsLabel="Supply"
      />
      {children}
    </>
  );
}
