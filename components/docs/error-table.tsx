/** Every error code, rendered from ERROR_STATUS (so the table cannot drift), with the operations that return it. */
import { errorAnchor } from "@/components/docs/anchors";
import { Prose } from "@/components/docs/code-block";
import { Table, Td, Th } from "@/components/ui/table";
import type { AppErrorCode } from "@/lib/errors";
import { ERROR_STATUS, errorTypeForStatus } from "@/lib/http/errors";
import type { OpenApiDocument } from "@/lib/http/openapi/document";
import { ERROR_DESCRIPTIONS } from "@/lib/http/openapi/errors";

/** code → "METHOD /path" of each operation that lists it. */
function whereReturned(doc: OpenApiDocument): Map<string, string[]> {
  const where = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      for (const response of Object.values(op!.responses)) {
        for (const code of response["x-svc-error-codes"] ?? []) {
          if (!where.has(code)) where.set(code, []);
          where.get(code)!.push(`${method.toUpperCase()} ${path}`);
        }
      }
    }
  }
  return where;
}

export function ErrorTable({ doc }: { doc: OpenApiDocument }) {
  const where = whereReturned(doc);
  const codes = (Object.keys(ERROR_STATUS) as AppErrorCode[]).sort((a, b) => ERROR_STATUS[a] - ERROR_STATUS[b]);
  return (
    <Table caption="Error codes">
      <thead>
        <tr>
          <Th>Status</Th>
          <Th>Code</Th>
          <Th>Meaning</Th>
        </tr>
      </thead>
      <tbody>
        {codes.map((code) => {
          const routes = where.get(code) ?? [];
          return (
            <tr key={code} id={errorAnchor(code)} className="scroll-mt-20 align-top">
              <Td className="font-mono text-xs">
                {ERROR_STATUS[code]}
                <span className="block text-[0.7rem] text-zinc-500">{errorTypeForStatus(ERROR_STATUS[code])}</span>
              </Td>
              <Td className="font-mono text-xs font-semibold">{code}</Td>
              <Td className="text-xs text-zinc-600 dark:text-zinc-400">
                <div className="min-w-[18rem] whitespace-normal">
                  <Prose text={ERROR_DESCRIPTIONS[code]} />
                  {routes.length > 0 && <span className="mt-0.5 block text-[0.7rem] text-zinc-500">{describeRoutes(routes)}</span>}
                </div>
              </Td>
            </tr>
          );
        })}
      </tbody>
    </Table>
  );
}

/** Where a code comes from, briefly: a code every route can answer is not worth listing. */
function describeRoutes(routes: string[]): string {
  if (routes.length > 20) return "Any route.";
  const shown = routes.slice(0, 6).join(", ");
  return routes.length > 6 ? `From ${shown} and ${routes.length - 6} more.` : `From ${shown}.`;
}
