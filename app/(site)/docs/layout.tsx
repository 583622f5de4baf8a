import { DocsSearch } from "@/components/docs/docs-search";
import { DocsToc } from "@/components/docs/docs-toc";
import { DOCS_PAGES, docsHref, searchIndex } from "@/components/docs/docs-content";
import { API_ROUTES } from "@/app/api-routes";
import { deployment } from "@/lib/env";
import { getOpenApiDocument } from "@/lib/http/openapi/document";
import { C } from "@/components/docs/code-block";

/** The docs, one page per section, with a table of contents (sidebar, or a disclosure on a phone) and a search. */
export default function DocsLayout({ children }: { children: React.ReactNode }) {
  const doc = getOpenApiDocument(API_ROUTES);
  return (
    <main className="mx-auto w-full max-w-6xl px-4 py-8 sm:px-6 sm:py-12">
      <header className="max-w-3xl">
        <p className="text-sm font-medium tracking-wide text-emerald-700 uppercase dark:text-emerald-400">Docs</p>
        <p className="mt-2 text-zinc-600 dark:text-zinc-400">
          An OpenAI-compatible endpoint at <C>{deployment.origin}/v1</C>, paid from a prepaid USDC balance on Base. The machine-readable
          description is{" "}
          <a href="/openapi.json" className="text-emerald-700 underline underline-offset-2 hover:no-underline dark:text-emerald-400">
            /openapi.json
          </a>{" "}
          (OpenAPI 3.1); these pages are rendered from it.
        </p>
      </header>
      <div className="mt-8 grid gap-8 lg:grid-cols-[14rem_minmax(0,1fr)] lg:gap-10">
        <aside className="flex min-w-0 flex-col gap-4">
          <div className="flex flex-col gap-4 lg:sticky lg:top-20">
            <DocsSearch entries={searchIndex(doc)} />
            <DocsToc entries={DOCS_PAGES.map((p) => ({ title: p.title, href: docsHref(p.id) }))} />
          </div>
        </aside>
        <div className="min-w-0">{children}</div>
      </div>
    </main>
  );
}
