import type { Metadata } from "next";
import { AccessClasses } from "@/components/docs/access-classes";
import { BillingAndHealthRules, ToolsAndStructuredOutputs } from "@/components/docs/agent-guides";
import { ApiReference } from "@/components/docs/api-reference";
import { C } from "@/components/docs/code-block";
import { DocSection, DocsToc, type TocEntry } from "@/components/docs/doc-section";
import { ErrorTable } from "@/components/docs/error-table";
import { PricingGuide, QuickStart, TopUpGuide, type DeploymentFacts } from "@/components/docs/guides";
import { deployment, env } from "@/lib/env";
import { listModels } from "@/lib/market/models";
import { API_ROUTES } from "@/app/api-routes";
import { getOpenApiDocument } from "@/lib/openapi/document";

export const dynamic = "force-dynamic";

export const metadata: Metadata = {
  title: "API docs",
  description: "Use svc from code: quick starts for humans and agents, x402 top-ups, pricing, errors and the full API reference.",
};

const TOC: TocEntry[] = [
  { id: "quick-start", title: "Quick start" },
  { id: "access", title: "Access classes" },
  { id: "top-up", title: "Top up with x402" },
  { id: "tools", title: "Tools and structured outputs" },
  { id: "pricing", title: "Router and pricing" },
  { id: "billing", title: "Billing and offer health" },
  { id: "errors", title: "Errors" },
  { id: "reference", title: "API reference" },
];

// GET /docs – how to use the API, with the reference and the error table rendered from the OpenAPI document
export default async function DocsPage() {
  const doc = getOpenApiDocument(API_ROUTES);
  const models = await listModels().catch(() => null);
  const facts: DeploymentFacts = {
    origin: deployment.origin,
    feeBps: env.PLATFORM_FEE_BPS,
    defaultMaxCents: env.DEFAULT_MAX_PRICE_CENTS,
    topUpMin: env.TOPUP_MIN_USD,
    topUpMax: env.TOPUP_MAX_USD,
    exampleModel: models?.data.find((m) => m.best_price_cents !== null)?.id ?? models?.data[0]?.id ?? "llama-3.3-70b",
  };

  return (
    <main className="mx-auto w-full max-w-6xl px-4 py-8 sm:px-6 sm:py-12">
      <header className="max-w-3xl">
        <p className="text-sm font-medium tracking-wide text-emerald-700 uppercase dark:text-emerald-400">Docs</p>
        <h1 className="mt-2 text-3xl font-semibold tracking-tight sm:text-4xl">Use svc from code</h1>
        <p className="mt-3 text-zinc-600 dark:text-zinc-400">
          An OpenAI-compatible endpoint at <C>{deployment.origin}/v1</C>, paid from a prepaid USDC balance on Base. Sign in with a wallet, top up over
          x402, create an API key, call <C>POST /v1/chat/completions</C>. The machine-readable description is{" "}
          <a href="/openapi.json" className="text-emerald-700 hover:underline dark:text-emerald-400">
            /openapi.json
          </a>{" "}
          (OpenAPI 3.1); this page is rendered from it.
        </p>
      </header>

      <div className="mt-10 grid gap-10 lg:grid-cols-[12rem_minmax(0,1fr)]">
        <aside className="hidden lg:block">
          <div className="sticky top-20">
            <DocsToc entries={TOC} />
          </div>
        </aside>
        <div className="flex min-w-0 flex-col gap-12">
          <DocSection id="quick-start" title="Quick start">
            <QuickStart facts={facts} />
          </DocSection>

          <DocSection id="access" title="Access classes" lead="Every route is exactly one of three classes; the two credentials are not interchangeable.">
            <AccessClasses doc={doc} />
          </DocSection>

          <DocSection id="top-up" title="Top up with x402" lead="402 → sign an EIP-3009 USDC authorization → retry. Credit happens only after the transfer settled on chain.">
            <TopUpGuide facts={facts} />
          </DocSection>

          <DocSection id="tools" title="Tools and structured outputs" lead="What agent frameworks send works as with OpenAI: function tools, JSON schemas, content parts.">
            <ToolsAndStructuredOutputs facts={facts} />
          </DocSection>

          <DocSection id="pricing" title="Router and pricing">
            <PricingGuide facts={facts} />
          </DocSection>

          <DocSection id="billing" title="Billing and offer health" lead="Nobody is billed for more than svc counted, and only a supplier's own faults count against its offer.">
            <BillingAndHealthRules />
          </DocSection>

          <DocSection
            id="errors"
            title="Errors"
            lead={
              <>
                Every error is <C>{'{"error":{"message","type","code"}}'}</C> (OpenAI&apos;s shape, so SDKs classify it), sometimes with extra fields
                such as <C>param</C>, <C>needed</C> or <C>available</C>. Branch on <C>code</C>.
              </>
            }
          >
            <ErrorTable doc={doc} />
          </DocSection>

          <DocSection id="reference" title="API reference" lead={`${doc.info.title} ${doc.info.version}: every operation with its access class, parameters, body and answers.`}>
            <ApiReference doc={doc} />
          </DocSection>
        </div>
      </div>
    </main>
  );
}
