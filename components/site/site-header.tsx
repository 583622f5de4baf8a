import Link from "next/link";
import { NavLinks } from "@/components/site/nav-links";
import { WalletButton } from "@/components/wallet/wallet-button";

const ITEMS = [
  { href: "/", label: "Market", prefixes: ["/market"] },
  { href: "/dashboard", label: "Dashboard", prefixes: ["/dashboard"] },
  { href: "/supply", label: "Supply", prefixes: ["/supply"] },
  { href: "/docs", label: "Docs", prefixes: ["/docs"] },
];

export function SiteHeader() {
  return (
    <header className="sticky top-0 z-20 border-b border-zinc-200 bg-white/85 backdrop-blur dark:border-zinc-800 dark:bg-zinc-950/85">
      <div className="mx-auto flex h-14 max-w-6xl items-center justify-between gap-3 px-4 sm:justify-start sm:gap-6 sm:px-6">
        <Link href="/" className="flex shrink-0 items-center gap-2 font-semibold tracking-tight">
          <span
            aria-hidden="true"
            className="flex size-7 items-center justify-center rounded-lg bg-emerald-700 text-xs font-bold text-white"
          >
            svc
          </span>
          <span>
            svc<span className="sr-only"> home</span>
          </span>
        </Link>
        <div className="hidden min-w-0 flex-1 sm:block">
          <NavLinks label="Main" items={ITEMS} />
        </div>
        <div className="shrink-0">
          <WalletButton />
        </div>
      </div>
      {/* On a phone the sections get their own row, full width, instead of squeezing beside the wallet. */}
      <div className="border-t border-zinc-100 px-3 py-1.5 sm:hidden dark:border-zinc-800">
        <NavLinks label="Sections" items={ITEMS} />
      </div>
    </header>
  );
}
