"use client";

import { useState } from "react";
import { useModels } from "@/components/buyer/queries";
import { Panel } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { CopyButton } from "@/components/ui/copy-button";
import { useSettings } from "@/components/wallet/providers";

type Lang = "curl" | "python" | "node";
const LABELS: Record<Lang, string> = { curl: "curl", python: "Python", node: "Node.js" };

function snippet(lang: Lang, baseUrl: string, model: string): string {
  switch (lang) {
    case "curl":
      return `curl ${baseUrl}/chat/completions \\
  -H "Authorization: Bearer $SVC_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{
    "model": "${model}",
    "messages": [{"role": "user", "content": "Hello!"}]
  }'`;
    case "python":
      return `import os
from openai import OpenAI

client = OpenAI(base_url="${baseUrl}", api_key=os.environ["SVC_API_KEY"])

reply = client.chat.completions.create(
    model="${model}",
    messages=[{"role": "user", "content": "Hello!"}],
    # optional: pay at most 90¢ per diem for this request
    extra_headers={"X-Svc-Max-Cents": "90"},
)
print(reply.choices[0].message.content)`;
    case "node":
      return `import OpenAI from "openai";

const client = new OpenAI({ baseURL: "${baseUrl}", apiKey: process.env.SVC_API_KEY });

const reply = await client.chat.completions.create({
  model: "${model}",
  messages: [{ role: "user", content: "Hello!" }],
});
console.log(reply.choices[0].message.content);`;
  }
}

/** "Use it from code": the OpenAI SDKs and curl, pointed at this deployment's /v1. */
export function CodePanel() {
  const settings = useSettings();
  const models = useModels();
  const [lang, setLang] = useState<Lang>("curl");
  const baseUrl = `${settings.origin}/v1`;
  const model = models.data?.data.find((m) => m.best_price_cents !== null)?.id ?? models.data?.data[0]?.id ?? "llama-3.3-70b";
  const code = snippet(lang, baseUrl, model);

  return (
    <Panel
      title="Use it from code"
      description={
        <>
          OpenAI-compatible: point any OpenAI SDK at <code className="font-mono text-xs">{baseUrl}</code> with an svc key.
        </>
      }
      id="code"
    >
      <div className="flex flex-col gap-3">
        <div className="flex items-center gap-2">
          <div role="tablist" aria-label="Language" className="flex flex-1 gap-1 rounded-lg bg-zinc-100 p-1 dark:bg-zinc-800">
            {(Object.keys(LABELS) as Lang[]).map((l) => (
              <button
                key={l}
                role="tab"
                type="button"
                aria-selected={lang === l}
                aria-controls="code-snippet"
                onClick={() => setLang(l)}
                className={cn(
                  "flex-1 rounded-md px-3 py-1.5 text-sm font-medium transition-colors",
                  lang === l ? "bg-white shadow-sm dark:bg-zinc-950" : "text-zinc-600 hover:text-zinc-900 dark:text-zinc-400",
                )}
              >
                {LABELS[l]}
              </button>
            ))}
          </div>
          <CopyButton value={code} label={`Copy ${LABELS[lang]} example`} size="md" />
        </div>
        <div id="code-snippet" role="tabpanel" aria-label={`${LABELS[lang]} example`}>
          <pre tabIndex={0} className="overflow-x-auto rounded-lg bg-zinc-950 p-4 text-xs leading-relaxed text-zinc-100">
            <code>{code}</code>
          </pre>
        </div>
      </div>
    </Panel>
  );
}
