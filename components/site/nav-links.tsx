"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { cn } from "@/components/ui/cn";

/** Active on `href` itself, or under any of `prefixes`. */
export type NavItem = { href: string; label: string; prefixes?: string[] };

/** Links with aria-current on the active one; scrolls sideways on a narrow screen instead of wrapping. */
export function NavLinks({ items, label, variant = "top" }: { items: NavItem[]; label: string; variant?: "top" | "tabs" }) {
  const pathname = usePathname();
  return (
    <nav aria-label={label} className="-mb-px min-w-0 overflow-x-auto">
      <ul className={cn("flex items-center", variant === "top" ? "gap-1" : "gap-4 sm:gap-6")}>
        {items.map((item) => {
          const active = pathname === item.href || (item.prefixes ?? []).some((p) => pathname.startsWith(p));
          return (
            <li key={item.href}>
              <Link
                href={item.href}
                aria-current={active ? "page" : undefined}
                className={cn(
                  "block text-sm font-medium whitespace-nowrap transition-colors",
                  variant === "top"
                    ? cn(
                        "rounded-md px-2.5 py-1.5",
                        active
                          ? "bg-zinc-100 text-zinc-900 dark:bg-zinc-800 dark:text-white"
                          : "text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-white",
                      )
                    : cn(
                        "border-b-2 pb-2.5",
                        active
                          ? "border-emerald-600 text-zinc-900 dark:text-white"
                          : "border-transparent text-zinc-600 hover:border-zinc-300 hover:text-zinc-800 dark:text-zinc-400 dark:hover:text-white",
                      ),
                )}
              >
                {item.label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
