import type { Metadata } from "next";
import { ApiKeys } from "@/components/buyer/api-keys";
import { CodePanel } from "@/components/buyer/code-panel";

export const metadata: Metadata = { title: "API keys" };

export default function KeysPage() {
  return (
    <div className="flex flex-col gap-6">
      <ApiKeys />
      <CodePanel />
    </div>
  );
}
