/** The X-Svc-* request and response headers of the inference endpoint, read and written here, at the edge. */
import "server-only";
import { AppError, NO_OFFER_CODES, type AppErrorCode } from "@/lib/errors";
import type { OperationDocs } from "@/lib/http/route-types";
import type { ResponseHeaderName } from "@/lib/http/openapi/headers";
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

/**
 * X-Svc-Ignored-Fields: the fields a request sent that svc accepted and does not act on (IGNORED_FIELDS in
 * lib/router/schemas.ts says why for each), comma-separated; absent when there are none.
 */
export function ignoredFieldsHeader(fields: readonly string[]): Record<string, string> {
  return fields.length > 0 ? { "x-svc-ignored-fields": fields.join(", ") } : {};
}

/** The headers of a completion's 200 (costHeaders), as the OpenAPI description names them. */
export const COST_HEADER_NAMES: ResponseHeaderName[] = [
  "BalanceRemaining",
  "SvcGenerationId",
  "SvcCost",
  "SvcPriceCents",
  "SvcBurnDiem",
  "SvcMaxCents",
  "SvcIgnoredFields",
];

/**
 * What every route served by the completion pipeline (lib/router/complete.ts) documents alike, whatever its wire
 * shape: the max-price request header, the errors the pipeline can answer, and the X-Svc-* explanation of a 503.
 */
export const COMPLETION_PIPELINE_DOCS = {
  requestHeaders: ["MaxCentsHeader"],
  errors: [
    "stream_not_supported",
    "context_length_exceeded",
    "max_price_above_key_cap",
    "model_not_found",
    "model_retired",
    "insufficient_balance",
    "spend_limit_exceeded",
    "upstream_error",
    "upstream_rejected_request",
    "loop_detected",
    ...NO_OFFER_CODES,
  ] satisfies AppErrorCode[],
  errorHeaders: { 503: ["SvcErrorCode", "SvcBuyerMaxCents", "SvcCheapestPostedCents", "SvcRoutableDiemAboveMax"] },
} satisfies Pick<OperationDocs, "requestHeaders" | "errors" | "errorHeaders">;
