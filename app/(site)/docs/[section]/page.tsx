import type { Metadata } from "next";
import { notFound, permanentRedirect } from "next/navigation";
import { DOCS_PAGES } from "@/components/docs/docs-content";
import { DocsPageBody } from "@/components/docs/docs-page-body";
import { API_ROUTES } from "@/app/api-routes";
import { getOpenApiDocument } from "@/lib/http/openapi/document";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ section: string }> };

function pageFor(section: string) {
  return section === "quick-start" ? undefined : DOCS_PAGES.find((p) => p.id === section);
}

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  const page = pageFor((await params).section);
  return { title: page ? `${page.title} · docs` : "Docs" };
}

// GET /docs/{section} – one section of the docs (access, top-up, tools, pricing, billing, errors, reference)
export default async function DocsSectionPage({ params }: Params) {
  const { section } = await params;
  // The quick start is the docs' first page, /docs itself; its own address (linked from elsewhere) leads there.
  if (section === "quick-start") permanentRedirect("/docs");
  const page = pageFor(section);
  if (!page) notFound();
  return <DocsPageBody page={page} doc={getOpenApiDocument(API_ROUTES)} />;
}
