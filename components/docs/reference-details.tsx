"use client";

/**
 * The API reference in the browser: the list of operations and schemas (from the headings the server passes), and
 * their details rendered when opened: an operation's parameters, body and answers, a schema's fields. The details
 * come from GET /openapi.json, fetched once on the first open. Opening the page at an anchor (#op-…, #schema-…), or
 * following a link to one on the page, opens that entry.
 */
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useState, useSyncExternalStore, type ReactNode } from "react";
import { errorAnchor, schemaAnchor } from "@/components/docs/anchors";
import { Prose } from "@/components/docs/code-block";
import { AuthBadge, MethodLabel } from "@/components/docs/operation-labels";
import { SchemaFields, TypeLabel, type JsonSchema } from "@/components/docs/schema-view";
import { Card } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { QueryState } from "@/components/ui/query-state";
import { api } from "@/lib/browser/api";
import type { OpenApiDocument, OpenApiOperation, OpenApiParameter, OpenApiResponse } from "@/lib/http/openapi/document";

/** An operation's heading, as the server passes it (the rest is in GET /openapi.json). */
export type ReferenceOperation = {
  anchor: string;
  method: string;
  path: string;
  auth: OpenApiOperation["x-svc-auth"];
  summary: string;
  description: string | null;
};
type ReferenceTag = { name: string; description: string; operations: ReferenceOperation[] };
type ReferenceSchema = { name: string; description: string | null };

export function ReferenceList({ tags, schemas }: { tags: ReferenceTag[]; schemas: ReferenceSchema[] }) {
  return (
    <div className="flex flex-col gap-8">
      {tags.map((tag) => (
        <div key={tag.name} className="flex flex-col gap-3">
          <div>
            <h3 id={`tag-${tag.name.toLowerCase()}`} className="scroll-mt-20 text-base font-semibold text-zinc-900 dark:text-zinc-100">
              {tag.name}
            </h3>
            <p className="text-xs text-zinc-600 dark:text-zinc-400">{tag.description}</p>
          </div>
          {tag.operations.map((op) => (
            <Card key={op.anchor} id={op.anchor} aria-label={`${op.method.toUpperCase()} ${op.path}`} className="scroll-mt-20 p-4 sm:p-5">
              <header className="flex flex-wrap items-center gap-2">
                <MethodLabel method={op.method} />
                <code className="font-mono text-sm font-semibold break-all text-zinc-900 dark:text-zinc-100">{op.path}</code>
                <AuthBadge auth={op.auth} />
              </header>
              <p className="mt-2 text-sm font-medium text-zinc-900 dark:text-zinc-100">{op.summary}</p>
              {op.description && (
                <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">
                  <Prose text={op.description} />
                </p>
              )}
              <OperationDetails anchor={op.anchor} path={op.path} method={op.method} />
            </Card>
          ))}
        </div>
      ))}
      <div className="flex flex-col gap-3">
        <h3 id="schemas" className="scroll-mt-20 text-base font-semibold text-zinc-900 dark:text-zinc-100">
          Schemas
        </h3>
        <div className="grid items-start gap-3 lg:grid-cols-2">
          {schemas.map(({ name, description }) => (
            <Card key={name} id={schemaAnchor(name)} className="scroll-mt-20 p-4">
              <h4 className="font-mono text-sm font-semibold">{name}</h4>
              {description && <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">{description}</p>}
              <SchemaDetails anchor={schemaAnchor(name)} name={name} />
            </Card>
          ))}
        </div>
      </div>
    </div>
  );
}

function useOpenApiDocument(enabled: boolean) {
  return useQuery({ queryKey: ["openapi"], queryFn: () => api<OpenApiDocument>("/openapi.json"), enabled, staleTime: Infinity });
}

function subscribeToHash(onChange: () => void) {
  window.addEventListener("hashchange", onChange);
  window.addEventListener("popstate", onChange);
  return () => {
    window.removeEventListener("hashchange", onChange);
    window.removeEventListener("popstate", onChange);
  };
}

/** Open while the URL points at `anchor`, and whenever the reader opens it. */
function useOpenAtAnchor(anchor: string) {
  const hash = useSyncExternalStore(
    subscribeToHash,
    () => window.location.hash,
    () => "",
  );
  const [open, setOpen] = useState(false);
  useEffect(() => {
    if (hash === `#${anchor}`) setOpen(true);
  }, [hash, anchor]);
  return [open, setOpen] as const;
}

function Disclosure({ anchor, summary, children }: { anchor: string; summary: string; children: () => ReactNode }) {
  const [open, setOpen] = useOpenAtAnchor(anchor);
  return (
    <details open={open} onToggle={(event) => setOpen(event.currentTarget.open)} className="group disclosure">
      <summary className="disclosure-summary">{summary}</summary>
      {open && <div className="px-3 pb-3">{children()}</div>}
    </details>
  );
}

function OperationDetails({ anchor, path, method }: { anchor: string; path: string; method: string }) {
  return (
    <Disclosure anchor={anchor} summary="Parameters, body and answers">
      {() => <OperationBody path={path} method={method} />}
    </Disclosure>
  );
}

function SchemaDetails({ anchor, name }: { anchor: string; name: string }) {
  return (
    <Disclosure anchor={anchor} summary="Fields">
      {() => <SchemaBody name={name} />}
    </Disclosure>
  );
}

function OperationBody({ path, method }: { path: string; method: string }) {
  const doc = useOpenApiDocument(true);
  return (
    <QueryState query={doc} loadingLabel="Loading the operation" errorTitle="Couldn't load the API description">
      {(d) => {
        const op = d.paths[path]?.[method as keyof (typeof d.paths)[string]];
        return op ? <Operation doc={d} op={op} /> : <p className="text-xs">Not in the current API description.</p>;
      }}
    </QueryState>
  );
}

function SchemaBody({ name }: { name: string }) {
  const doc = useOpenApiDocument(true);
  return (
    <QueryState query={doc} loadingLabel="Loading the schema" errorTitle="Couldn't load the API description">
      {(d) => {
        const schema = d.components.schemas[name];
        if (!schema) return <p className="text-xs">Not in the current API description.</p>;
        return <div className="mt-2">{name === "Error" ? <ErrorSchemaNote /> : <SchemaOrVariants schema={schema} />}</div>;
      }}
    </QueryState>
  );
}

function resolveParameter(doc: OpenApiDocument, p: OpenApiParameter | { $ref: string }): OpenApiParameter {
  if (!("$ref" in p)) return p;
  return doc.components.parameters[p.$ref.split("/").pop()!] as unknown as OpenApiParameter;
}

function Operation({ doc, op }: { doc: OpenApiDocument; op: OpenApiOperation }) {
  const params = (op.parameters ?? []).map((p) => resolveParameter(doc, p)).filter((p) => p.name !== "X-Request-Id");
  const body = op.requestBody?.content["application/json"].schema;
  return (
    <>
      {params.length > 0 && (
        <Block title="Parameters">
          <dl className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {params.map((p) => (
              <div key={`${p.in}:${p.name}`} className="py-1.5">
                <dt className="flex flex-wrap items-baseline gap-x-2 font-mono text-xs">
                  <span className="font-semibold text-zinc-900 dark:text-zinc-100">{p.name}</span>
                  <span className="text-zinc-600 dark:text-zinc-400">
                    <TypeLabel schema={p.schema} />
                  </span>
                  <span className="text-[0.7rem] text-zinc-600 dark:text-zinc-400">in {p.in}</span>
                  {p.required && <span className="text-[0.7rem] text-amber-700 dark:text-amber-400">required</span>}
                </dt>
                {p.description && <dd className="mt-0.5 text-xs text-zinc-600 dark:text-zinc-400">{p.description}</dd>}
              </div>
            ))}
          </dl>
        </Block>
      )}

      {body && (
        <Block title="Request body (application/json)">
          <SchemaFields schema={body} />
        </Block>
      )}

      <Block title="Responses">
        <ul className="flex flex-col gap-2">
          {Object.entries(op.responses).map(([status, response]) => (
            <ResponseRow key={status} status={status} response={response} />
          ))}
        </ul>
      </Block>
    </>
  );
}

function ErrorSchemaNote() {
  return (
    <p className="font-mono text-xs text-zinc-600 dark:text-zinc-400">
      {'{"error": {"message": string, "type": string, "code": '}
      <Link href="/docs/errors" className="text-emerald-700 underline underline-offset-2 hover:no-underline dark:text-emerald-400">
        an error code
      </Link>
      {", …extra fields}}"}
    </p>
  );
}

function SchemaOrVariants({ schema }: { schema: JsonSchema }) {
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants && variants.every((v) => v.type === "object")) {
    return (
      <div className="flex flex-col gap-2">
        {variants.map((v, i) => (
          <div key={i}>
            <p className="text-xs font-medium text-zinc-600 dark:text-zinc-400">{i === 0 ? "One of:" : "or:"}</p>
            <SchemaFields schema={v} />
          </div>
        ))}
      </div>
    );
  }
  return <SchemaFields schema={schema} />;
}

function ResponseRow({ status, response }: { status: string; response: OpenApiResponse }) {
  const codes = response["x-svc-error-codes"] ?? [];
  // Every answer has X-Request-Id, and rate-limited routes put X-RateLimit-* on all of theirs: list them once, on the success.
  const ok = Number(status) < 400;
  const headers = Object.keys(response.headers ?? {}).filter(
    (h) => h !== "X-Request-Id" && (ok || status === "429" || !h.startsWith("X-RateLimit-")),
  );
  const schema = response.content?.["application/json"]?.schema;
  const successShapes = schema ? ((schema.oneOf as JsonSchema[] | undefined) ?? [schema]).filter((s) => !s.allOf) : [];
  return (
    <li className="rounded-md border border-zinc-100 px-3 py-2 dark:border-zinc-800">
      <div className="flex flex-wrap items-baseline gap-x-2">
        <span
          className={cn(
            "font-mono text-xs font-semibold",
            ok ? "text-emerald-700 dark:text-emerald-400" : "text-red-700 dark:text-red-400",
          )}
        >
          {status}
        </span>
        {successShapes.map((s, i) => (
          <span key={i} className="font-mono text-xs">
            <TypeLabel schema={s} />
          </span>
        ))}
        {codes.length === 0 && <span className="text-xs text-zinc-600 dark:text-zinc-400">{response.description}</span>}
      </div>
      {codes.length > 0 && (
        <p className="mt-1 flex flex-wrap gap-1">
          {codes.map((code) => (
            <a
              key={code}
              href={`/docs/errors#${errorAnchor(code)}`}
              className="rounded bg-zinc-100 px-1.5 py-0.5 font-mono text-[0.7rem] text-zinc-700 hover:underline dark:bg-zinc-800 dark:text-zinc-300"
            >
              {code}
            </a>
          ))}
        </p>
      )}
      {headers.length > 0 && <p className="mt-1 font-mono text-[0.7rem] text-zinc-600 dark:text-zinc-400">Headers: {headers.join(", ")}</p>}
    </li>
  );
}

function Block({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="mt-3">
      <h4 className="mb-1 text-xs font-medium tracking-wide text-zinc-600 uppercase dark:text-zinc-400">{title}</h4>
      {children}
    </div>
  );
}
