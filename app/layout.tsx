import type { Metadata, Viewport } from "next";
import { SiteFooter } from "@/components/site/site-footer";
import { SiteHeader } from "@/components/site/site-header";
import { Providers } from "@/components/wallet/providers";
import { WalletBanners } from "@/components/wallet/wallet-banners";
import { getClientSettings } from "@/lib/http/client-settings";
import "./globals.css";

// The browser's settings (RPC URL, USDC address, limits) come from the environment at request time, not at build time.
export const dynamic = "force-dynamic";

export const metadata: Metadata = {
  title: { default: "svc: the open inference marketplace", template: "%s · svc" },
  description: "Buy OpenAI-compatible inference from the cheapest supplier, pay in USDC on Base.",
};

export const viewport: Viewport = {
  width: "device-width",
  initialScale: 1,
  themeColor: [
    { media: "(prefers-color-scheme: light)", color: "#ffffff" },
    { media: "(prefers-color-scheme: dark)", color: "#09090b" },
  ],
};

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en">
      <body className="flex min-h-screen flex-col bg-zinc-50 font-sans text-zinc-900 antialiased dark:bg-zinc-950 dark:text-zinc-100">
        <a
          href="#main"
          className="sr-only rounded-md bg-white px-3 py-2 text-sm font-medium text-zinc-900 shadow focus:not-sr-only focus:fixed focus:top-2 focus:left-2 focus:z-50"
        >
          Skip to content
        </a>
        <Providers settings={getClientSettings()}>
          <SiteHeader />
          <WalletBanners />
          <div id="main" tabIndex={-1} className="flex-1">
            {children}
          </div>
          <SiteFooter />
        </Providers>
      </body>
    </html>
  );
}
