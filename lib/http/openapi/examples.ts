import "server-only";

/**
 * A success answer's example, made from the JSON Schema the document publishes for it: every property present (so a
 * reader sees the whole shape), one item per list, the first choice of a union or an enum, and values in each unit's
 * wire format ("12.500000" for USDC and diem, an ISO time, a checksummed-looking address). Made from the schema and
 * never written by hand, so it cannot drift from it; tests/integration/openapi.test.ts parses every example with the
 * route's own response schema.
 */
type JsonSchema = Record<string, unknown>;

const MAX_DEPTH = 32;
const EXAMPLE_TIME = "2026-01-15T12:00:00.000Z";

/** Strings a pattern may want, tried in order: the first that matches is the example. */
const PATTERN_CANDIDATES = [
  "12.500000",
  "1.500000",
  "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
  `0x${"ab".repeat(32)}`,
  "chatcmpl-8f3a2c1d9e7b6a5f4e3d2c1b",
  "resp_8f3a2c1d9e7b6a5f4e3d2c1b",
  "sup_75b28ca6",
  "svc_3kTq9Lx2",
  "llama-3.3-70b",
  "2026-01-15",
  "1h",
  "example",
];

export function exampleFromSchema(schema: JsonSchema, resolve: (ref: string) => JsonSchema | undefined, depth = 0): unknown {
  if (depth > MAX_DEPTH) return null;
  const next = (s: JsonSchema) => exampleFromSchema(s, resolve, depth + 1);
  if (typeof schema.$ref === "string") {
    const target = resolve(schema.$ref);
    return target ? next(target) : null;
  }
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ["anyOf", "oneOf", "allOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      const choice = (options as JsonSchema[]).find((o) => o.type !== "null") ?? (options[0] as JsonSchema);
      return next(choice);
    }
  }
  const type = Array.isArray(schema.type) ? ((schema.type as string[]).find((t) => t !== "null") ?? "null") : schema.type;
  switch (type) {
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, next(property)]));
    }
    case "array": {
      const items = schema.items as JsonSchema | undefined;
      return items ? [next(items)] : [];
    }
    case "string":
      return exampleString(schema);
    case "integer":
    case "number": {
      const min =
        typeof schema.minimum === "number" ? schema.minimum : typeof schema.exclusiveMinimum === "number" ? schema.exclusiveMinimum + 1 : 0;
      const max = typeof schema.maximum === "number" ? schema.maximum : Number.POSITIVE_INFINITY;
      const value = Math.min(Math.max(type === "integer" ? 42 : 0.5, min), max);
      return type === "integer" ? Math.round(value) : value;
    }
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return null;
  }
}

function exampleString(schema: JsonSchema): string {
  if (schema.format === "date-time") return EXAMPLE_TIME;
  if (schema.format === "date") return EXAMPLE_TIME.slice(0, 10);
  if (schema.format === "uuid") return "3f1c2a9e-7b4d-4e8a-9c1f-2d3e4f5a6b7c";
  if (schema.format === "uri") return "https://svc.example/v1";
  if (typeof schema.pattern === "string") {
    const pattern = new RegExp(schema.pattern);
    const found = PATTERN_CANDIDATES.find((candidate) => pattern.test(candidate));
    if (found) return found;
  }
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  return "example".padEnd(min, "x");
}
