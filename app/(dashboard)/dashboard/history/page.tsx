import type { Metadata } from "next";
import { Suspense } from "react";
import { HistoryPanel } from "@/components/buyer/history-panel";

export const metadata: Metadata = { title: "History" };

// The panel reads its filter from the URL (useSearchParams), which needs a Suspense boundary to prerender.
export default function HistoryPage() {
  return (
    <Suspense>
      <HistoryPanel />
    </Suspense>
  );
}
