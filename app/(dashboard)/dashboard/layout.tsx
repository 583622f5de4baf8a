import { SectionHeader } from "@/components/site/section-header";

const TABS = [
  { href: "/dashboard", label: "Overview" },
  { href: "/dashboard/keys", label: "API keys" },
  { href: "/dashboard/usage", label: "Usage" },
];

export default function BuyerLayout({ children }: { children: React.ReactNode }) {
  return (
    <>
      <SectionHeader title="Dashboard" description="Your balance, keys and requests as a buyer." tabs={TABS} tabsLabel="Dashboard" />
      {children}
    </>
  );
}
