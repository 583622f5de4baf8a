/**
 * The wire's building blocks, shared by the server and the browser (no server imports here): the units every
 * response uses, the request rules forms check before sending, and the registry that names the response shapes
 * the OpenAPI description lists as components. Every JSON property on the wire is snake_case.
 */
import { z } from "zod";
import { formatMicros, parseMicros } from "@/lib/money";

/** Named schemas: each becomes `#/components/schemas/<id>` in the OpenAPI description. */
export const componentRegistry = z.registry<{ id: string }>();

export function component<S extends z.ZodType>(id: string, schema: S): S {
  componentRegistry.add(schema, { id });
  return schema;
}

// ─── response units ──────────────────────────────────────────────────────────

export const Usdc = z
  .string()
  .regex(/^-?\d+\.\d{6}$/)
  .describe('USDC, decimal string with 6 places, e.g. "12.500000"');
export const Diem = z
  .string()
  .regex(/^-?\d+\.\d{6}$/)
  .describe('Diem (capacity), decimal string with 6 places, e.g. "3.250000"');
export const Cents = z.number().int().describe("Cents per diem (100 = list price)");
export const Timestamp = z.string().meta({ format: "date-time" });
export const Day = z.string().meta({ format: "date" }).describe("UTC day, YYYY-MM-DD");
export const TxHash = z.templateLiteral(["0x", z.string()]).describe("Transaction hash on Base");
export const Address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/)
  .describe("EIP-55 wallet address");
export const ListPrice = z
  .object({
    input_diem_per_mtok: Diem,
    output_diem_per_mtok: Diem,
    cache_read_diem_per_mtok: Diem.nullable().describe("A cached prompt token's price (prompt caching); null: none"),
    cache_write_diem_per_mtok: Diem.nullable().describe(
      "Writing a prompt to the cache, where the model's providers charge it; null: none (svc bills uncached prompt tokens at the input price)",
    ),
  })
  .describe("List price, diem per 1M tokens");

/** What a model or an offer can serve beyond plain chat. */
export const Feature = z.enum(["tools", "json_schema", "vision"]);
export const DisputeRate = z
  .number()
  .min(0)
  .max(1)
  .nullable()
  .describe("Disputed clears / clears over the last 30 UTC days; null without clears");

/** A price per 1M tokens (list price, or what an upstream publishes) as the wire shows it. */
export function formatListPrice(price: {
  inputMicroDiemPerMTok: bigint;
  outputMicroDiemPerMTok: bigint;
  cacheReadMicroDiemPerMTok?: bigint | null;
  cacheWriteMicroDiemPerMTok?: bigint | null;
}): z.output<typeof ListPrice> {
  const optional = (micros: bigint | null | undefined) => (micros == null ? null : formatMicros(micros));
  return {
    input_diem_per_mtok: formatMicros(price.inputMicroDiemPerMTok),
    output_diem_per_mtok: formatMicros(price.outputMicroDiemPerMTok),
    cache_read_diem_per_mtok: optional(price.cacheReadMicroDiemPerMTok),
    cache_write_diem_per_mtok: optional(price.cacheWriteMicroDiemPerMTok),
  };
}

/** `{ "object": "list", "data": [...] }`, the shape of every list (paginated ones add `next_cursor`). */
export function listOf<S extends z.ZodType>(item: S) {
  return z.object({ object: z.literal("list"), data: z.array(item) });
}

export function pageOf<S extends z.ZodType>(item: S) {
  return z.object({ object: z.literal("list"), data: z.array(item), next_cursor: z.string().nullable() });
}

// ─── request rules ───────────────────────────────────────────────────────────

export const MIN_PRICE_CENTS = 1;
export const MAX_PRICE_CENTS = 10_000;
/** 100 cents per diem: one diem of capacity for one USDC, the upstream's list price. */
export const LIST_PRICE_CENTS = 100;

/** An offer's price or a buyer's max price: whole cents per diem, 1 to 10000. */
export const PriceCents = z
  .number({ error: "must be an integer number of cents per diem" })
  .int("must be an integer number of cents per diem")
  .min(MIN_PRICE_CENTS, `must be at least ${MIN_PRICE_CENTS} cent per diem`)
  .max(MAX_PRICE_CENTS, `must be at most ${MAX_PRICE_CENTS} cents (100 USDC) per diem`);

/** A form's price text checked by the same rule the API applies; null when it is a valid price. */
export function priceCentsProblem(text: string): string | null {
  if (!/^\d{1,5}$/.test(text.trim())) return `Whole cents per diem, ${MIN_PRICE_CENTS} to ${MAX_PRICE_CENTS}.`;
  const result = PriceCents.safeParse(Number(text));
  return result.success ? null : `Whole cents per diem, ${MIN_PRICE_CENTS} to ${MAX_PRICE_CENTS}.`;
}

/**
 * A USD amount as the API takes it: a decimal string, parsed to micro-USDC by integer arithmetic. A malformed one is
 * a 400 `invalid_amount` (the code rides on the issue); the bounds are the domain's (they come from configuration).
 */
export const UsdAmount = z
  .string()
  .max(40)
  .transform((text, ctx) => {
    const micros = parseMicros(text.trim());
    if (micros === null) {
      ctx.addIssue({
        code: "custom",
        message: `must be a USD decimal string with at most 6 decimals, like "10.00" (got ${JSON.stringify(text.slice(0, 40))})`,
        params: { code: "invalid_amount" },
      });
      return z.NEVER;
    }
    return micros;
  })
  .describe('USD decimal string with at most 6 decimals, e.g. "10.00"');

/**
 * A form's USD amount text against bounds in micro-USDC, by the same integer rule as the server; null when valid.
 * Says the exact bound ("at most $1.337285"), never a rounded one.
 */
export function usdAmountProblem(
  text: string,
  bounds: { minMicros: bigint; maxMicros?: bigint },
  format: (micros: bigint) => string,
): string | null {
  const micros = parseMicros(text.trim());
  if (micros === null) return "Enter an amount like 10.00 (at most 6 decimals).";
  if (micros < bounds.minMicros) return `The minimum is ${format(bounds.minMicros)}.`;
  if (bounds.maxMicros !== undefined && micros > bounds.maxMicros) return `At most ${format(bounds.maxMicros)}.`;
  return null;
}

/** Path ids: a malformed one is the same 404 as an unknown one, so ids cannot be probed. */
/** What a model id can be: letters, digits and . _ : / - (at most 128), starting with a letter or digit. */
export const MODEL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * How a completion's answer ended (completions.end_reason, the generation record's `end`): read whole, or a stream cut
 * short by the buyer hanging up, by the upstream's error or by a deadline (then billed for what was delivered:
 * lib/upstream/metering.ts streamedAnswerToBill). An answer that is not streamed is read whole or not billed at all:
 * always "completed".
 */
export const COMPLETION_ENDS = ["completed", "client_cancelled", "upstream_error", "timeout"] as const;
export type CompletionEnd = (typeof COMPLETION_ENDS)[number];

const COMPLETION_PREFIX = "chatcmpl-";

/** The response's id for a completion's: `resp_` and the same random part (the generation stays findable by it). */
export function responseIdOf(completionId: string): string {
  return `resp_${completionId.startsWith(COMPLETION_PREFIX) ? completionId.slice(COMPLETION_PREFIX.length) : completionId}`;
}

/** The completion behind a response's id (`resp_…` → `chatcmpl-…`); any other id as it is. */
export function completionIdOf(id: string): string {
  return id.startsWith("resp_") ? `${COMPLETION_PREFIX}${id.slice("resp_".length)}` : id;
}

/**
 * The id the buyer was given for a completion (#37): its response's, resp_…, when it answered POST /v1/responses
 * (completions.responses_api), else its own chatcmpl-…. Every place that shows a completion shows this one, and each
 * accepts either.
 */
export function givenIdOf(completionId: string, responsesApi: boolean): string {
  return responsesApi ? responseIdOf(completionId) : completionId;
}
