/**
 * A deterministic value that satisfies a JSON Schema, for the reference upstream's tool calls and structured
 * outputs. Covers what clients generate from zod and pydantic: objects (every property, so strict schemas are
 * met), arrays, enums and consts, anyOf/oneOf/allOf, nullable types, local $refs, numeric and length bounds
 * and common string formats. `pattern` is not solved (a string shaped by the property's name is used).
 */

type Schema = Record<string, unknown>;

const MAX_DEPTH = 24;

const FORMATS: Record<string, string> = {
  "date-time": "2025-01-01T00:00:00Z",
  date: "2025-01-01",
  time: "00:00:00",
  email: "user@example.com",
  uri: "https://example.com/",
  url: "https://example.com/",
  uuid: "00000000-0000-4000-8000-000000000000",
  hostname: "example.com",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
};

export function exampleOf(schema: unknown, root: unknown = schema, name = "value", depth = 0): unknown {
  if (schema === true || schema === undefined) return name;
  if (!isSchema(schema) || depth > MAX_DEPTH) return null;
  if (typeof schema.$ref === "string") return exampleOf(resolveRef(schema.$ref, root), root, name, depth + 1);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      const preferred = options.find((o) => !(isSchema(o) && o.type === "null")) ?? options[0];
      return exampleOf(preferred, root, name, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((s) => exampleOf(s, root, name, depth + 1));
    return parts.every(isSchema) ? Object.assign({}, ...parts) : parts[0];
  }
  const type = Array.isArray(schema.type) ? (schema.type.find((t) => t !== "null") ?? "null") : schema.type;
  switch (type ?? (isSchema(schema.properties) ? "object" : isSchema(schema.items) ? "array" : "string")) {
    case "object":
      return objectOf(schema, root, depth);
    case "array":
      return Array.from({ length: Math.max(1, asCount(schema.minItems)) }, (_, i) =>
        exampleOf(schema.items, root, `${name}_${i}`, depth + 1),
      );
    case "integer":
      return numberIn(schema, true);
    case "number":
      return numberIn(schema, false);
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return stringFor(schema, name);
  }
}

function objectOf(schema: Schema, root: unknown, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = isSchema(schema.properties) ? schema.properties : {};
  for (const [key, child] of Object.entries(properties)) out[key] = exampleOf(child, root, key, depth + 1);
  for (const key of Array.isArray(schema.required) ? schema.required : []) {
    if (typeof key === "string" && !(key in out)) out[key] = key;
  }
  return out;
}

function numberIn(schema: Schema, integer: boolean): number {
  const min =
    typeof schema.minimum === "number"
      ? schema.minimum
      : typeof schema.exclusiveMinimum === "number"
        ? schema.exclusiveMinimum + (integer ? 1 : 0.5)
        : null;
  const max =
    typeof schema.maximum === "number"
      ? schema.maximum
      : typeof schema.exclusiveMaximum === "number"
        ? schema.exclusiveMaximum - (integer ? 1 : 0.5)
        : null;
  let value = min ?? (max !== null && max < 1 ? max : 1);
  if (integer) value = min !== null ? Math.ceil(value) : Math.floor(value);
  return value;
}

function stringFor(schema: Schema, name: string): string {
  const format = typeof schema.format === "string" ? FORMATS[schema.format] : undefined;
  let text = format ?? name;
  const min = asCount(schema.minLength);
  if (text.length < min) text = text.padEnd(min, "x");
  if (typeof schema.maxLength === "number") text = text.slice(0, Math.max(0, schema.maxLength));
  return text;
}

function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").filter(Boolean)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    node = isSchema(node) ? node[key] : undefined;
  }
  return node;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asCount(value: unknown): number {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? Math.min(value, 64) : 0;
}
