import type { Metadata } from "next";
import { DOCS_PAGES } from "@/components/docs/docs-content";
import { DocsPageBody } from "@/components/docs/docs-page-body";
import { API_ROUTES } from "@/app/api-routes";
import { getOpenApiDocument } from "@/lib/http/openapi/document";

export const dynamic = "force-dynamic";

export const metadata: Metadata = {
  title: "API docs",
  description: "Use svc from code: quick starts for humans and agents, x402 top-ups, pricing, errors and the full API reference.",
};

// GET /docs – the quick start; the other sections are pages of their own (/docs/<section>)
export default function DocsPage() {
  return <DocsPageBody page={DOCS_PAGES[0]} doc={getOpenApiDocument(API_ROUTES)} />;
}
