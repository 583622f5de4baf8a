/** The response and request headers the API defines (lib/http/route.ts, lib/router/*, lib/payments/*). */
import "server-only";

export type HeaderSpec = {
  name: string;
  description: string;
  schema: { type: "string" | "integer"; pattern?: string; minimum?: number; maximum?: number };
};

const decimal = { type: "string", pattern: "^\\d+\\.\\d{6}$" } as const;

/** Response headers, keyed by the component name they get in the document. */
export const RESPONSE_HEADERS = {
  RequestId: {
    name: "X-Request-Id",
    description: "This request's id (yours, when you sent a valid X-Request-Id); quote it when reporting a problem.",
    schema: { type: "string" },
  },
  RateLimitLimit: {
    name: "X-RateLimit-Limit",
    description: "Requests allowed per minute by the tightest limit (per key, per IP).",
    schema: { type: "integer" },
  },
  RateLimitRemaining: {
    name: "X-RateLimit-Remaining",
    description: "Requests left in this minute under that limit.",
    schema: { type: "integer" },
  },
  RateLimitReset: { name: "X-RateLimit-Reset", description: "Seconds until the window resets.", schema: { type: "integer" } },
  RetryAfter: {
    name: "Retry-After",
    description: "Seconds to wait before retrying (429; 503 while the database is unavailable or the instance drains).",
    schema: { type: "integer" },
  },
  Allow: { name: "Allow", description: "The methods this path serves (405).", schema: { type: "string" } },
  BalanceRemaining: {
    name: "X-Balance-Remaining",
    description: "Your confirmed balance after this completion's clear, USDC.",
    schema: decimal,
  },
  SvcCost: {
    name: "X-Svc-Cost",
    description: "What this completion cost, USDC (the same as usage.cost_details.charge).",
    schema: decimal,
  },
  SvcGenerationId: {
    name: "X-Svc-Generation-Id",
    description: "This completion's id (the body's id): its record, cost and ledger entry at GET /v1/generations/{id}.",
    schema: { type: "string", pattern: "^chatcmpl-[A-Za-z0-9]{1,64}$" },
  },
  SvcPriceCents: {
    name: "X-Svc-Price-Cents",
    description: "The price of the offer that served it, cents per diem.",
    schema: { type: "integer" },
  },
  SvcBurnDiem: {
    name: "X-Svc-Burn-Diem",
    description: "Capacity burned: prompt and completion tokens at the model's list price, diem.",
    schema: decimal,
  },
  SvcMaxCents: {
    name: "X-Svc-Max-Cents",
    description: "The max price this request was routed under, cents per diem.",
    schema: { type: "integer" },
  },
  SvcReserved: {
    name: "X-Svc-Reserved",
    description:
      "A stream's reservation, USDC: the most it can cost (its worst case at the offer's price). Sent before the answer; the usage says what it cost.",
    schema: decimal,
  },
  SvcMaxBurnDiem: {
    name: "X-Svc-Max-Burn-Diem",
    description: "A stream's burn ceiling, diem: the capacity its worst case can burn at the model's list price.",
    schema: decimal,
  },
  SvcIgnoredFields: {
    name: "X-Svc-Ignored-Fields",
    description:
      "The request's fields svc accepted and did not act on (OpenRouter's and OpenAI's fields it has no use for: models, route, transforms, top_a, usage.include false, service_tier, prompt_cache_key, safety_identifier, verbosity, store, prediction; on /v1/responses also include, truncation auto, top_logprobs, max_tool_calls, text.verbosity), comma-separated. Absent when every field sent was used.",
    schema: { type: "string" },
  },
  SvcErrorCode: {
    name: "X-Svc-Error-Code",
    description:
      "Why no offer could take the request: no_offer_at_or_below_max, no_capacity, no_healthy_supplier, no_offer_passing_probes, no_offer_fits_request, no_offer_supports_<feature> or no_offer_matches_provider_<preference> (only, ignore, quantizations, data_collection, cancelled_billing, max_price, require_verified).",
    schema: { type: "string" },
  },
  SvcBuyerMaxCents: {
    name: "X-Svc-Buyer-Max-Cents",
    description: "Your max price for this request, cents per diem.",
    schema: { type: "integer" },
  },
  SvcCheapestPostedCents: {
    name: "X-Svc-Cheapest-Posted-Cents",
    description: "The cheapest active offer's price for the model, cents per diem; empty when nobody offers it.",
    schema: { type: "string", pattern: "^\\d*$" },
  },
  SvcRoutableDiemAboveMax: {
    name: "X-Svc-Routable-Diem-Above-Max",
    description: "Capacity available today from healthy offers priced above your max, diem.",
    schema: decimal,
  },
  SetCookie: {
    name: "Set-Cookie",
    description:
      "svc_session=…; HttpOnly; SameSite=Lax; Path=/ over http; __Host-svc_session=…; HttpOnly; SameSite=Lax; Path=/; Secure over https (both names are accepted).",
    schema: { type: "string" },
  },
  PaymentRequired: {
    name: "PAYMENT-REQUIRED",
    description:
      "x402 v2: base64 JSON PaymentRequired with `accepts` (exact scheme, eip155:8453, USDC, payTo the treasury, exactly the amount).",
    schema: { type: "string" },
  },
  PaymentResponse: {
    name: "PAYMENT-RESPONSE",
    description: "x402 v2: base64 JSON settlement result with the transaction hash.",
    schema: { type: "string" },
  },
} as const satisfies Record<string, HeaderSpec>;

export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

/** Request headers some routes read, keyed by the component name of their parameter. */
export const REQUEST_HEADERS = {
  RequestIdHeader: {
    name: "X-Request-Id",
    description: "Optional: your own request id (1-128 of A-Z a-z 0-9 . _ : -), echoed back.",
    schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
  },
  MaxCentsHeader: {
    name: "X-Svc-Max-Cents",
    description:
      "The most you pay for this request, cents per diem (1-10000). Precedence: this header > the key's maxPriceCents > the account's default > the platform default (100). Above the key's cap is a 400.",
    schema: { type: "integer", minimum: 1, maximum: 10_000 },
  },
  PaymentSignatureHeader: {
    name: "PAYMENT-SIGNATURE",
    description: "x402 v2: base64 JSON payment payload with the signed EIP-3009 authorization (the retry after the 402).",
    schema: { type: "string" },
  },
  XPaymentHeader: { name: "X-PAYMENT", description: "x402 v1 form of the same payment payload.", schema: { type: "string" } },
  IdempotencyKeyHeader: {
    name: "Idempotency-Key",
    description:
      "Optional: your own key for this withdrawal (1-100 of A-Z a-z 0-9 . _ : -). Sent again with the same key, the request answers the withdrawal it made instead of making another; GET /v1/supply/withdrawals?idempotency_key= finds it after a lost answer.",
    schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,100}$" },
  },
} as const satisfies Record<string, HeaderSpec>;

export type RequestHeaderName = keyof typeof REQUEST_HEADERS;
