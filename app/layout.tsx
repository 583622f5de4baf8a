import type { Metadata } from "next";
import "./globals.css";

export const metadata: Metadata = {
  title: "svc: the open inference marketplace",
  description: "Buy OpenAI-compatible inference from the cheapest supplier, pay in USDC on Base.",
};

export default function RootLayout({ children }: { children: React.ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-zinc-50 font-sans text-zinc-900 antialiased dark:bg-zinc-950 dark:text-zinc-100">
        {children}
      </body>
    </html>
  );
}
