import type { ReactNode } from "react";
import { NavLinks, type NavItem } from "@/components/site/nav-links";

/** A page section's title and its tabs. */
export function SectionHeader({
  title,
  description,
  tabs,
  tabsLabel,
}: {
  title: string;
  description?: ReactNode;
  tabs: NavItem[];
  tabsLabel: string;
}) {
  return (
    <div className="mb-6 flex flex-col gap-4 border-b border-zinc-200 dark:border-zinc-800">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight sm:text-3xl">{title}</h1>
        {description && <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">{description}</p>}
      </div>
      <NavLinks label={tabsLabel} items={tabs} variant="tabs" />
    </div>
  );
}
