import { CopyButton } from "@/components/ui/copy-button";

/** A titled, copyable code sample. */
export function CodeBlock({ code, title, language }: { code: string; title?: string; language?: string }) {
  return (
    <figure className="min-w-0 overflow-hidden rounded-lg border border-zinc-800 bg-zinc-950">
      {title && (
        <figcaption className="flex items-center justify-between border-b border-zinc-800 px-4 py-1.5 text-xs text-zinc-400">
          <span>{title}</span>
          {language && <span className="font-mono uppercase">{language}</span>}
        </figcaption>
      )}
      <div className="relative">
        <pre tabIndex={0} className="overflow-x-auto p-4 pr-20 text-xs leading-relaxed text-zinc-100">
          <code>{code}</code>
        </pre>
        <div className="absolute top-2 right-2">
          <CopyButton value={code} label={`Copy ${title ?? "code"}`} />
        </div>
      </div>
    </figure>
  );
}

/** Inline code. */
export function C({ children }: { children: React.ReactNode }) {
  return <code className="code-inline">{children}</code>;
}

/** Text whose `backticked` parts are inline code (descriptions in the OpenAPI document use that convention). */
export function Prose({ text }: { text: string }) {
  return <>{text.split("`").map((part, i) => (i % 2 === 1 ? <C key={i}>{part}</C> : part))}</>;
}
