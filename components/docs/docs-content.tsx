import "server-only";
import type { ReactNode } from "react";
import { AccessClasses } from "@/components/docs/access-classes";
import { BillingAndHealthRules, ToolsAndStructuredOutputs } from "@/components/docs/agent-guides";
import { errorAnchor, operationAnchor } from "@/components/docs/anchors";
import { ApiReference } from "@/components/docs/api-reference";
import { C } from "@/components/docs/code-block";
import { ErrorTable } from "@/components/docs/error-table";
import type { DocsSearchEntry } from "@/components/docs/docs-search";
import { PricingGuide, QuickStart, TopUpGuide, type DeploymentFacts } from "@/components/docs/guides";
import { MarketQuality } from "@/components/docs/market-quality";
import { ProbesGuide } from "@/components/docs/probes-guide";
import { ProviderPreferencesGuide } from "@/components/docs/provider-preferences";
import { StreamingGuide } from "@/components/docs/streaming-guide";
import { SupplierGuide } from "@/components/docs/supplier-guide";
import { deployment, env } from "@/lib/env";
import { listModels } from "@/lib/market/models";
import { ERROR_STATUS } from "@/lib/http/errors";
import type { OpenApiDocument, OpenApiOperation } from "@/lib/http/openapi/document";

/** One page of the docs: /docs is the quick start, /docs/<id> each of the others. */
export type DocsPage = {
  id: string;
  title: string;
  lead?: (doc: OpenApiDocument) => ReactNode;
  render: (ctx: { doc: OpenApiDocument; facts: DeploymentFacts }) => ReactNode;
};

export const DOCS_PAGES: DocsPage[] = [
  { id: "quick-start", title: "Quick start", render: ({ facts }) => <QuickStart facts={facts} /> },
  {
    id: "access",
    title: "Access classes",
    lead: () =>
      "Every route is exactly one of four classes: public, session, bearer key, or either of the two for reads of your own account. The two credentials are not interchangeable where a route takes only one.",
    render: ({ doc }) => <AccessClasses doc={doc} />,
  },
  {
    id: "top-up",
    title: "Top up with x402",
    lead: () => "402 → sign an EIP-3009 USDC authorization → retry. Credit happens only after the transfer settled on chain.",
    render: ({ facts }) => <TopUpGuide facts={facts} />,
  },
  {
    id: "tools",
    title: "Tools and structured outputs",
    lead: () => "What agent frameworks send works as with OpenAI: function tools, JSON schemas, content parts.",
    render: ({ facts }) => <ToolsAndStructuredOutputs facts={facts} />,
  },
  {
    id: "streaming",
    title: "Streaming (v2)",
    lead: () => "The answer as it is generated, for the coding agents and chat apps that stream, billed exactly however a stream ends.",
    render: ({ facts }) => <StreamingGuide facts={facts} />,
  },
  { id: "pricing", title: "Router and pricing", render: ({ facts }) => <PricingGuide facts={facts} /> },
  {
    id: "provider",
    title: "Provider preferences",
    lead: () => "Choose among the offers of a model by latency, throughput, supplier, quantization, data policy and price per token.",
    render: ({ facts }) => <ProviderPreferencesGuide facts={facts} />,
  },
  {
    id: "billing",
    title: "Billing and offer health",
    lead: () => "Nobody is billed for more than svc counted, and only a supplier's own faults count against its offer.",
    render: () => <BillingAndHealthRules />,
  },
  {
    id: "quality",
    title: "Measured quality and declarations",
    lead: () => "What real traffic measured of each offer, and what its supplier declares about it (the supplier's word).",
    render: () => (
      <MarketQuality minRequests={env.QUALITY_MIN_REQUESTS} minSources={env.QUALITY_MIN_SOURCES} refreshMs={env.QUALITY_REFRESH_MS} />
    ),
  },
  {
    id: "probes",
    title: "Fidelity probes",
    lead: () => "The platform buys a few deterministic requests from every offer and flags those that do not serve what they claim.",
    render: () => <ProbesGuide />,
  },
  {
    id: "suppliers",
    title: "Selling capacity (suppliers)",
    lead: () =>
      "Put a vLLM, llama.cpp or Ollama server, or a hosted OpenAI-compatible API, on the market: what each declaration means, and posting an offer with the API or the dashboard.",
    render: ({ facts }) => <SupplierGuide facts={facts} />,
  },
  {
    id: "errors",
    title: "Errors",
    lead: () => (
      <>
        Every error is <C>{'{"error":{"message","type","code"}}'}</C> (OpenAI&apos;s shape, so SDKs classify it), sometimes with extra
        fields such as <C>param</C>, <C>needed</C> or <C>available</C>. Branch on <C>code</C>.
      </>
    ),
    render: ({ doc }) => <ErrorTable doc={doc} />,
  },
  {
    id: "reference",
    title: "API reference",
    lead: (doc) => `${doc.info.title} ${doc.info.version}: every operation with its access class, parameters, body and answers.`,
    render: ({ doc }) => <ApiReference doc={doc} />,
  },
];

export function docsHref(id: string): string {
  return id === "quick-start" ? "/docs" : `/docs/${id}`;
}

export async function deploymentFacts(): Promise<DeploymentFacts> {
  const models = await listModels().catch(() => null);
  return {
    origin: deployment.origin,
    feeBps: env.PLATFORM_FEE_BPS,
    defaultMaxCents: env.DEFAULT_MAX_PRICE_CENTS,
    topUpMin: env.TOPUP_MIN_USD,
    topUpMax: env.TOPUP_MAX_USD,
    exampleModel: models?.data.find((m) => m.best_price_cents !== null)?.id ?? models?.data[0]?.id ?? "llama-3.3-70b",
  };
}

/** What the docs search looks through: the pages, every operation of the reference, every error code. */
export function searchIndex(doc: OpenApiDocument): DocsSearchEntry[] {
  const entries: DocsSearchEntry[] = DOCS_PAGES.map((p) => ({ title: p.title, href: docsHref(p.id), kind: "Page" }));
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const operation = op as OpenApiOperation;
      entries.push({
        title: `${method.toUpperCase()} ${path}`,
        detail: operation.summary,
        href: `/docs/reference#${operationAnchor(operation)}`,
        kind: "Endpoint",
      });
    }
  }
  for (const code of Object.keys(ERROR_STATUS)) {
    entries.push({
      title: code,
      detail: `HTTP ${ERROR_STATUS[code as keyof typeof ERROR_STATUS]}`,
      href: `/docs/errors#${errorAnchor(code)}`,
      kind: "Error code",
    });
  }
  return entries;
}
