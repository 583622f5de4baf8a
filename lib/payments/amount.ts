import "server-only";
import { AppError } from "@/lib/errors";
import { formatMicros, parseMicros } from "@/lib/money";

/** An amount (already parsed by the wire's UsdAmount) within the configured bounds, or a 400 that says which. */
export function assertAmountInRange(micros: bigint, bounds: { minMicros: bigint; maxMicros?: bigint }): bigint {
  if (micros < bounds.minMicros || (bounds.maxMicros !== undefined && micros > bounds.maxMicros)) {
    const range =
      bounds.maxMicros === undefined
        ? `at least ${formatMicros(bounds.minMicros)}`
        : `between ${formatMicros(bounds.minMicros)} and ${formatMicros(bounds.maxMicros)}`;
    throw new AppError("amount_out_of_range", `amount must be ${range} USD.`, {
      details: {
        param: "amount",
        min: formatMicros(bounds.minMicros),
        ...(bounds.maxMicros === undefined ? {} : { max: formatMicros(bounds.maxMicros) }),
      },
    });
  }
  return micros;
}

/** A USD decimal from the validated configuration. */
export function configuredMicros(value: string): bigint {
  const micros = parseMicros(value);
  if (micros === null) throw new Error(`not a USD decimal: ${value}`);
  return micros;
}
