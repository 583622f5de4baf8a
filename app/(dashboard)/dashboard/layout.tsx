import { SectionHeader } from "@/components/site/section-header";

const TABS = [
  { href: "/dashboard", label: "Overview" },
  { href: "/dashboard/keys", label: "API keys" },
  { href: "/dashboard/usage", label: "Usage" },
  { href: "/dashboard/history", label: "History" },
];

export default function BuyerLayout({ children }: { children: React.ReactNode }) {
  return (
    <>
      <SectionHeader title="Dashboard" description="Your balance, keys, requests and money history." tabs={TABS} tabsLabel="Dashboard" />
      {children}
    </>
  );
}
