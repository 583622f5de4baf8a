import { AppError } from "@/lib/http/errors";
import { formatMicros, parseMicros } from "@/lib/money";

/** Parses a USD decimal string from a request into micro-USDC within bounds, or throws a 400 that says why. */
export function parseUsdAmount(input: string, bounds: { minMicros: bigint; maxMicros?: bigint }): bigint {
  const micros = parseMicros(input.trim());
  if (micros === null) {
    throw new AppError(
      "invalid_amount",
      `amount must be a USD decimal string with at most 6 decimals, like "10.00" (got ${JSON.stringify(input)}).`,
      { details: { param: "amount" } },
    );
  }
  if (micros < bounds.minMicros || (bounds.maxMicros !== undefined && micros > bounds.maxMicros)) {
    const range = bounds.maxMicros === undefined
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
