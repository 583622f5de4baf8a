import { env } from "@/lib/env";
import { AppError } from "@/lib/http/errors";

export const MAX_PRICE_HEADER = "x-svc-max-cents";

/**
 * The buyer's max price in cents per diem: the request header if given, else the key's cap, else the
 * account's default, else the platform default. A header above the key's cap is refused, not clamped.
 */
export function resolveMaxPriceCents(
  req: Request,
  key: { maxPriceCents: number | null; accountDefaultMaxPriceCents: number | null },
): number {
  const header = req.headers.get(MAX_PRICE_HEADER);
  if (header !== null) {
    if (!/^\d{1,5}$/.test(header.trim()) || Number(header) < 1 || Number(header) > 10_000) {
      throw new AppError("invalid_request", `${MAX_PRICE_HEADER} must be an integer from 1 to 10000 (cents per diem).`);
    }
    const cents = Number(header);
    if (key.maxPriceCents !== null && cents > key.maxPriceCents) {
      throw new AppError(
        "max_price_above_key_cap",
        `${MAX_PRICE_HEADER}: ${cents} is above this API key's cap of ${key.maxPriceCents} cents per diem.`,
        { details: { key_max_price_cents: key.maxPriceCents } },
      );
    }
    return cents;
  }
  return key.maxPriceCents ?? key.accountDefaultMaxPriceCents ?? env.DEFAULT_MAX_PRICE_CENTS;
}
