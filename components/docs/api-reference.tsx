/**
 * The API reference, from the OpenAPI document (GET /openapi.json). The page carries each operation's heading (method,
 * path, access class, summary, description) and each schema's name, so every anchor is in the HTML and the page is
 * found by a search; the parameters, bodies, answers and fields, most of the document's weight, are rendered in the
 * browser when opened (components/docs/reference-details.tsx). The headings go to the browser as plain data for one
 * client list rather than as a server-rendered tree, which the page would otherwise carry twice (HTML and RSC
 * payload). So the page stays under 200 KB of HTML however many operations there are.
 */
import { operationAnchor } from "@/components/docs/anchors";
import { ReferenceList, type ReferenceOperation } from "@/components/docs/reference-details";
import type { OpenApiDocument, OpenApiOperation } from "@/lib/http/openapi/document";

type Entry = { method: string; path: string; op: OpenApiOperation };

function entries(doc: OpenApiDocument): Entry[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method, path, op: op as OpenApiOperation })),
  );
}

/** Every operation, grouped by tag, then every named schema. */
export function ApiReference({ doc }: { doc: OpenApiDocument }) {
  const all = entries(doc);
  const tags = doc.tags
    .map((tag) => ({
      name: tag.name,
      description: tag.description,
      operations: all
        .filter((e) => e.op.tags.includes(tag.name))
        .map(({ method, path, op }): ReferenceOperation => ({
          anchor: operationAnchor(op),
          method,
          path,
          auth: op["x-svc-auth"],
          summary: op.summary,
          description: op.description ?? null,
        })),
    }))
    .filter((tag) => tag.operations.length > 0);
  const schemas = Object.entries(doc.components.schemas).map(([name, schema]) => ({
    name,
    description: typeof schema.description === "string" ? schema.description : null,
  }));
  return <ReferenceList tags={tags} schemas={schemas} />;
}
