import "server-only";
import Link from "next/link";
import { DOCS_PAGES, deploymentFacts, docsHref, type DocsPage } from "@/components/docs/docs-content";
import type { OpenApiDocument } from "@/lib/http/openapi/document";

/**
 * One docs page: its title (the page's h1), lead, content, and links to the previous and next pages. `doc` is the
 * API description the page in app/ built from the route list (components import nothing from app/).
 */
export async function DocsPageBody({ page, doc }: { page: DocsPage; doc: OpenApiDocument }) {
  const facts = await deploymentFacts();
  const index = DOCS_PAGES.indexOf(page);
  const previous = DOCS_PAGES[index - 1];
  const next = DOCS_PAGES[index + 1];
  return (
    <article aria-labelledby="docs-title" className="flex flex-col">
      <h1 id="docs-title" className="text-3xl font-semibold tracking-tight sm:text-4xl">
        {page.title}
      </h1>
      {page.lead && <p className="mt-2 max-w-3xl text-zinc-600 dark:text-zinc-400">{page.lead(doc)}</p>}
      <div className="mt-6 flex flex-col gap-5 text-sm leading-relaxed text-zinc-700 dark:text-zinc-300">{page.render({ doc, facts })}</div>
      <nav
        aria-label="Previous and next page"
        className="mt-12 flex flex-wrap justify-between gap-4 border-t border-zinc-200 pt-6 text-sm dark:border-zinc-800"
      >
        {previous ? (
          <Link
            href={docsHref(previous.id)}
            className="text-emerald-700 underline underline-offset-2 hover:no-underline dark:text-emerald-400"
          >
            ← {previous.title}
          </Link>
        ) : (
          <span />
        )}
        {next && (
          <Link href={docsHref(next.id)} className="text-emerald-700 underline underline-offset-2 hover:no-underline dark:text-emerald-400">
            {next.title} →
          </Link>
        )}
      </nav>
    </article>
  );
}
