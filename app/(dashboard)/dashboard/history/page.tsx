import type { Metadata } from "next";
import { HistoryPanel } from "@/components/buyer/history-panel";

export const metadata: Metadata = { title: "History" };

export default function HistoryPage() {
  return <HistoryPanel />;
}
