/** The API reference, rendered on the server from the OpenAPI document (GET /openapi.json). */
import Link from "next/link";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import { SchemaFields, schemaAnchor, TypeLabel, type JsonSchema } from "@/components/docs/schema-view";
import { Prose } from "@/components/docs/code-block";
import { errorAnchor } from "@/components/docs/error-table";
import type { OpenApiDocument, OpenApiOperation, OpenApiParameter, OpenApiResponse } from "@/lib/openapi/document";

type Method = "get" | "post" | "put" | "patch" | "delete" | "head" | "options";
type Entry = { method: Method; path: string; op: OpenApiOperation };

const METHOD_TONE: Record<Method, string> = {
  get: "bg-sky-100 text-sky-800 dark:bg-sky-950 dark:text-sky-300",
  post: "bg-emerald-100 text-emerald-800 dark:bg-emerald-950 dark:text-emerald-300",
  put: "bg-amber-100 text-amber-800 dark:bg-amber-950 dark:text-amber-300",
  patch: "bg-amber-100 text-amber-800 dark:bg-amber-950 dark:text-amber-300",
  delete: "bg-red-100 text-red-800 dark:bg-red-950 dark:text-red-300",
  head: "bg-zinc-100 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300",
  options: "bg-zinc-100 text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300",
};

export function operationAnchor(op: OpenApiOperation) {
  return `op-${op.operationId}`;
}

export function AuthBadge({ auth }: { auth: OpenApiOperation["x-svc-auth"] }) {
  if (auth === "session") return <Badge tone="amber">session cookie</Badge>;
  if (auth === "bearer") return <Badge tone="sky">Bearer svc_ key</Badge>;
  if (auth === "key_or_session") return <Badge tone="sky">Bearer svc_ key or session</Badge>;
  return <Badge tone="green">public</Badge>;
}

export function MethodLabel({ method }: { method: string }) {
  return (
    <span
      className={cn(
        "inline-block w-16 shrink-0 rounded px-1.5 py-0.5 text-center font-mono text-xs font-semibold uppercase",
        METHOD_TONE[method as Method],
      )}
    >
      {method}
    </span>
  );
}

function entries(doc: OpenApiDocument): Entry[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method: method as Method, path, op: op as OpenApiOperation })),
  );
}

function resolveParameter(doc: OpenApiDocument, p: OpenApiParameter | { $ref: string }): OpenApiParameter {
  if (!("$ref" in p)) return p;
  return doc.components.parameters[p.$ref.split("/").pop()!] as unknown as OpenApiParameter;
}

/** Every operation, grouped by tag, then every named schema. */
export function ApiReference({ doc }: { doc: OpenApiDocument }) {
  const all = entries(doc);
  return (
    <div className="flex flex-col gap-8">
      {doc.tags.map((tag) => {
        const ops = all.filter((e) => e.op.tags.includes(tag.name));
        if (ops.length === 0) return null;
        return (
          <div key={tag.name} className="flex flex-col gap-3">
            <div>
              <h3 id={`tag-${tag.name.toLowerCase()}`} className="scroll-mt-20 text-base font-semibold text-zinc-900 dark:text-zinc-100">
                {tag.name}
              </h3>
              <p className="text-xs text-zinc-600 dark:text-zinc-400">{tag.description}</p>
            </div>
            {ops.map((e) => (
              <OperationCard key={`${e.method} ${e.path}`} doc={doc} entry={e} />
            ))}
          </div>
        );
      })}
      <div className="flex flex-col gap-3">
        <h3 id="schemas" className="scroll-mt-20 text-base font-semibold text-zinc-900 dark:text-zinc-100">
          Schemas
        </h3>
        <div className="grid gap-3 lg:grid-cols-2">
          {Object.entries(doc.components.schemas).map(([name, schema]) => (
            <Card key={name} id={schemaAnchor(name)} className="scroll-mt-20 p-4">
              <h4 className="font-mono text-sm font-semibold">{name}</h4>
              {typeof schema.description === "string" && (
                <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">{schema.description}</p>
              )}
              <div className="mt-2">{name === "Error" ? <ErrorSchemaNote /> : <SchemaOrVariants schema={schema} />}</div>
            </Card>
          ))}
        </div>
      </div>
    </div>
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
            <p className="text-xs font-medium text-zinc-600">{i === 0 ? "One of:" : "or:"}</p>
            <SchemaFields schema={v} />
          </div>
        ))}
      </div>
    );
  }
  return <SchemaFields schema={schema} />;
}

function OperationCard({ doc, entry: { method, path, op } }: { doc: OpenApiDocument; entry: Entry }) {
  const params = (op.parameters ?? []).map((p) => resolveParameter(doc, p)).filter((p) => p.name !== "X-Request-Id");
  const body = op.requestBody?.content["application/json"].schema;
  return (
    <Card id={operationAnchor(op)} className="scroll-mt-20 p-4 sm:p-5">
      <header className="flex flex-wrap items-center gap-2">
        <MethodLabel method={method} />
        <code className="font-mono text-sm font-semibold break-all text-zinc-900 dark:text-zinc-100">{path}</code>
        <AuthBadge auth={op["x-svc-auth"]} />
      </header>
      <p className="mt-2 text-sm font-medium text-zinc-900 dark:text-zinc-100">{op.summary}</p>
      {op.description && (
        <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">
          <Prose text={op.description} />
        </p>
      )}

      {params.length > 0 && (
        <Block title="Parameters">
          <dl className="divide-y divide-zinc-100 dark:divide-zinc-800">
            {params.map((p) => (
              <div key={`${p.in}:${p.name}`} className="py-1.5">
                <dt className="flex flex-wrap items-baseline gap-x-2 font-mono text-xs">
                  <span className="font-semibold text-zinc-900 dark:text-zinc-100">{p.name}</span>
                  <span className="text-zinc-600">
                    <TypeLabel schema={p.schema} />
                  </span>
                  <span className="text-[0.7rem] text-zinc-500">in {p.in}</span>
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
    </Card>
  );
}

function ResponseRow({ status, response }: { status: string; response: OpenApiResponse }) {
  const codes = response["x-svc-error-codes"] ?? [];
  // Every answer has X-Request-Id, and rate-limited routes put X-RateLimit-* on all of theirs: list them once, on the success.
  const ok = Number(status) < 400;
  const headers = Object.keys(response.headers ?? {}).filter(
    (h) => h !== "X-Request-Id" && (ok || status === "429" || !h.startsWith("X-RateLimit-")),
  );
  const schema = response.content?.["application/json"].schema;
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

function Block({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <div className="mt-4">
      <h4 className="mb-1 text-xs font-medium tracking-wide text-zinc-600 uppercase dark:text-zinc-400">{title}</h4>
      {children}
    </div>
  );
}
