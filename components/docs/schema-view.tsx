/**
 * JSON Schema (as generated into the OpenAPI document) rendered as readable field lists. The API reference renders
 * these in the browser, when an operation or a schema is opened (components/docs/reference-details.tsx).
 */
import type { ReactNode } from "react";
import { schemaAnchor } from "@/components/docs/anchors";

export type JsonSchema = Record<string, unknown>;

const REF_PREFIX = "#/components/schemas/";

function refName(schema: JsonSchema): string | null {
  return typeof schema.$ref === "string" && schema.$ref.startsWith(REF_PREFIX) ? schema.$ref.slice(REF_PREFIX.length) : null;
}

/** A short type: `string (date-time)`, `integer | null`, `array of ApiKey`, `"a" | "b"`. */
export function TypeLabel({ schema }: { schema: JsonSchema }): ReactNode {
  const name = refName(schema);
  if (name) {
    return (
      <a href={`#${schemaAnchor(name)}`} className="text-emerald-700 underline underline-offset-2 hover:no-underline dark:text-emerald-400">
        {name}
      </a>
    );
  }
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants) return joined(variants.map((v, i) => <TypeLabel key={i} schema={v} />));
  if (schema.allOf) return <TypeLabel schema={(schema.allOf as JsonSchema[])[0]} />;
  if ("const" in schema) return <span>{JSON.stringify(schema.const)}</span>;
  if (Array.isArray(schema.enum)) return <span>{schema.enum.map((v) => JSON.stringify(v)).join(" | ")}</span>;
  if (schema.type === "array" && schema.items) {
    return (
      <>
        array of <TypeLabel schema={schema.items as JsonSchema} />
      </>
    );
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [schema.type as string] : ["any"];
  return <span>{types.join(" | ") + (typeof schema.format === "string" ? ` (${schema.format})` : "")}</span>;
}

function joined(parts: ReactNode[]): ReactNode {
  return parts.flatMap((part, i) => (i === 0 ? [part] : [<span key={`sep-${i}`}> | </span>, part]));
}

/** min/max/length/pattern/default, in words. */
function constraints(schema: JsonSchema): string[] {
  const out: string[] = [];
  const s = (schema.anyOf as JsonSchema[] | undefined)?.find((v) => v.type !== "null") ?? schema;
  if (s.minimum !== undefined && s.maximum !== undefined) out.push(`${s.minimum}–${s.maximum}`);
  else if (s.minimum !== undefined) out.push(`≥ ${s.minimum}`);
  else if (s.maximum !== undefined) out.push(`≤ ${s.maximum}`);
  if (s.minLength !== undefined || s.maxLength !== undefined) out.push(`length ${s.minLength ?? 0}–${s.maxLength ?? "∞"}`);
  if (s.minItems !== undefined || s.maxItems !== undefined) out.push(`${s.minItems ?? 0}–${s.maxItems ?? "∞"} items`);
  if (typeof s.pattern === "string" && s.pattern.length <= 40) out.push(`pattern ${s.pattern}`);
  if (schema.default !== undefined) out.push(`default ${JSON.stringify(schema.default)}`);
  return out;
}

function objectOf(schema: JsonSchema): JsonSchema | null {
  if (schema.type === "object" && schema.properties) return schema;
  const nonNull = (schema.anyOf as JsonSchema[] | undefined)?.filter((v) => v.type !== "null");
  if (nonNull?.length === 1) return objectOf(nonNull[0]);
  if (schema.type === "array" && schema.items) return objectOf(schema.items as JsonSchema);
  return null;
}

/** The fields of an object schema; nested objects (not components) are listed under their field. */
export function SchemaFields({ schema, depth = 0 }: { schema: JsonSchema; depth?: number }) {
  const object = objectOf(schema);
  if (!object) {
    return (
      <p className="font-mono text-xs">
        <TypeLabel schema={schema} />
      </p>
    );
  }
  const required = new Set((object.required as string[] | undefined) ?? []);
  const properties = Object.entries(object.properties as Record<string, JsonSchema>);
  return (
    <dl
      className={depth === 0 ? "divide-y divide-zinc-100 dark:divide-zinc-800" : "mt-1 border-l border-zinc-200 pl-3 dark:border-zinc-700"}
    >
      {properties.map(([name, prop]) => {
        const nested = !refName(prop) && depth < 3 ? objectOf(prop) : null;
        const notes = constraints(prop);
        return (
          <div key={name} className="py-1.5">
            <dt className="flex flex-wrap items-baseline gap-x-2 font-mono text-xs">
              <span className="font-semibold text-zinc-900 dark:text-zinc-100">{name}</span>
              <span className="text-zinc-600 dark:text-zinc-400">
                <TypeLabel schema={prop} />
              </span>
              {required.has(name) ? (
                <span className="text-[0.7rem] text-amber-700 dark:text-amber-400">required</span>
              ) : (
                <span className="text-[0.7rem] text-zinc-500">optional</span>
              )}
            </dt>
            {(typeof prop.description === "string" || notes.length > 0) && (
              <dd className="mt-0.5 text-xs text-zinc-600 dark:text-zinc-400">
                {typeof prop.description === "string" && prop.description}
                {notes.length > 0 && <span className="ml-1 text-zinc-500">({notes.join(", ")})</span>}
              </dd>
            )}
            {nested && (
              <dd>
                <SchemaFields schema={nested} depth={depth + 1} />
              </dd>
            )}
          </div>
        );
      })}
    </dl>
  );
}
