/** The X-Svc-* request and response headers of the inference endpoint, read and written here, at the edge. */
import "server-only";
import { AppError } from "@/lib/errors";
import { formatMicros } from "@/lib/money";
import type { CompletionCost } from "@/lib/router/complete";
import { HOP_HEADER } from "@/lib/upstream/client";
import { PriceCents } from "@/lib/wire";

export const MAX_PRICE_HEADER = "x-svc-max-cents";

/** X-Svc-Max-Cents as a number, null when absent; anything but whole cents 1-10000 is a 400. */
export function readMaxPriceHeader(req: Request): number | null {
  const header = req.headers.get(MAX_PRICE_HEADER);
  if (header === null) return null;
  const cents = /^\d{1,5}$/.test(header.trim()) ? PriceCents.safeParse(Number(header)) : null;
  if (!cents?.success) {
    throw new AppError("invalid_request", "X-Svc-Max-Cents must be an integer from 1 to 10000 (cents per diem).", {
      details: { param: "X-Svc-Max-Cents" },
    });
  }
  return cents.data;
}

/** Refuses a request another svc forwarded (an offer whose upstream is svc would otherwise nest clears). */
export function assertNotForwardedBySvc(req: Request): void {
  if (req.headers.has(HOP_HEADER)) {
    throw new AppError(
      "loop_detected",
      `This request was forwarded by an svc router (${HOP_HEADER}); an offer's upstream must be a model provider, not svc itself.`,
    );
  }
}

/**
 * What a completion cost, as the headers its 200 carries (X-Balance-Remaining is the spec's), and the id its record
 * is found by (GET /v1/generations/{id}).
 */
export function costHeaders(cost: CompletionCost, generationId: string): Record<string, string> {
  return {
    "x-svc-generation-id": generationId,
    "x-balance-remaining": formatMicros(cost.balanceMicros),
    "x-svc-cost": formatMicros(cost.chargeMicros),
    "x-svc-price-cents": String(cost.priceCents),
    "x-svc-burn-diem": formatMicros(cost.burnMicroDiem),
    "x-svc-max-cents": String(cost.maxPriceCents),
  };
}
