/** The fragment ids of the docs (shared by the server pages, the search index and the reference's client parts). */
import type { OpenApiOperation } from "@/lib/http/openapi/document";

export function operationAnchor(op: Pick<OpenApiOperation, "operationId">) {
  return `op-${op.operationId}`;
}

export function schemaAnchor(name: string) {
  return `schema-${name}`;
}

export function errorAnchor(code: string) {
  return `error-${code}`;
}
