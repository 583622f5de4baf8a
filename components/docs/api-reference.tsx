/**
 * The API reference, from the OpenAPI document (GET /openapi.json). The server renders each operation's heading
 * (method, path, access class, summary, description) and each schema's name, so every anchor is in the HTML and the
 * page is found by a search; the parameters, bodies, answers and fields, most of the document's weight, are rendered
 * in the browser when opened (components/docs/reference-details.tsx). So the page stays well under 200 KB.
 */
import { operationAnchor, schemaAnchor } from "@/components/docs/anchors";
import { Prose } from "@/components/docs/code-block";
import { OperationDetails, SchemaDetails } from "@/components/docs/reference-details";
import { Badge } from "@/components/ui/badge";
import { Card } from "@/components/ui/card";
import { cn } from "@/components/ui/cn";
import type { OpenApiDocument, OpenApiOperation } from "@/lib/openapi/document";

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
              <OperationCard key={`${e.method} ${e.path}`} entry={e} />
            ))}
          </div>
        );
      })}
      <div className="flex flex-col gap-3">
        <h3 id="schemas" className="scroll-mt-20 text-base font-semibold text-zinc-900 dark:text-zinc-100">
          Schemas
        </h3>
        <div className="grid items-start gap-3 lg:grid-cols-2">
          {Object.entries(doc.components.schemas).map(([name, schema]) => (
            <Card key={name} id={schemaAnchor(name)} className="scroll-mt-20 p-4">
              <h4 className="font-mono text-sm font-semibold">{name}</h4>
              {typeof schema.description === "string" && (
                <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">{schema.description}</p>
              )}
              <SchemaDetails anchor={schemaAnchor(name)} name={name} />
            </Card>
          ))}
        </div>
      </div>
    </div>
  );
}

function OperationCard({ entry: { method, path, op } }: { entry: Entry }) {
  const anchor = operationAnchor(op);
  return (
    <Card id={anchor} aria-label={`${method.toUpperCase()} ${path}`} className="scroll-mt-20 p-4 sm:p-5">
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
      <OperationDetails anchor={anchor} path={path} method={method} />
    </Card>
  );
}
