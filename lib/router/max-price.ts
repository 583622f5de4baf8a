import "server-only";
import { env } from "@/lib/env";
import { AppError } from "@/lib/http/errors";

/**
 * The buyer's max price in cents per diem: the request's own (X-Svc-Max-Cents) if given, else the key's cap, else
 * the account's default, else the platform default. A request above the key's cap is refused, not clamped.
 */
export function resolveMaxPriceCents(
  requested: number | null,
  key: { maxPriceCents: number | null; accountDefaultMaxPriceCents: number | null },
): number {
  if (requested !== null) {
    if (key.maxPriceCents !== null && requested > key.maxPriceCents) {
      throw new AppError(
        "max_price_above_key_cap",
        `X-Svc-Max-Cents: ${requested} is above this API key's cap of ${key.maxPriceCents} cents per diem.`,
        { details: { key_max_price_cents: key.maxPriceCents } },
      );
    }
    return requested;
  }
  return key.maxPriceCents ?? key.accountDefaultMaxPriceCents ?? env.DEFAULT_MAX_PRICE_CENTS;
}
