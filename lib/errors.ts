/**
 * The one error type: domain functions and route handlers throw `new AppError(code, message, { details })`. It knows
 * nothing of HTTP: the edge (lib/http/errors.ts) maps each code to a status, in a map that must name every code here,
 * and renders the body. Client-safe (the docs render the codes).
 */

/**
 * Every error code, the one list of them, in the order the documents list them. A new code fails to compile until
 * it has a status (ERROR_STATUS, lib/http/errors.ts) and a meaning (ERROR_DESCRIPTIONS, lib/http/openapi/errors.ts).
 */
/**
 * Why no offer could take a completion (503, lib/router/no-offer.ts), each explained in the X-Svc-* headers: the
 * order the diagnosis documents them in.
 */
export const NO_OFFER_CODES = [
  "no_offer_at_or_below_max",
  "no_capacity",
  "no_healthy_supplier",
  "no_offer_supports_tools",
  "no_offer_supports_json_schema",
  "no_offer_supports_vision",
  "no_offer_matches_provider_only",
  "no_offer_matches_provider_ignore",
  "no_offer_matches_provider_quantizations",
  "no_offer_matches_provider_data_collection",
  "no_offer_matches_provider_cancelled_billing",
  "no_offer_matches_provider_max_price",
  "no_offer_matches_provider_require_verified",
  "no_offer_fits_request",
  "no_offer_passing_probes",
] as const;

export const APP_ERROR_CODES = [
  "invalid_request",
  "invalid_json",
  "json_too_deep",
  "json_too_many_values",
  "unsupported_content_type",
  "unknown_field",
  "stream_not_supported",
  "context_length_exceeded",
  "max_price_above_key_cap",
  "upstream_url_forbidden",
  "upstream_rejected_request",
  "invalid_amount",
  "amount_out_of_range",
  "invalid_payment_header",
  "missing_credentials",
  "invalid_api_key",
  "session_required",
  "session_cookie_not_accepted",
  "invalid_siwe_message",
  "malformed_signature",
  "siwe_domain_mismatch",
  "siwe_uri_mismatch",
  "siwe_wrong_chain",
  "siwe_nonce_invalid",
  "siwe_expired",
  "siwe_not_yet_valid",
  "siwe_issued_at_invalid",
  "invalid_signature",
  "insufficient_balance",
  "payment_required",
  "spend_limit_exceeded",
  "payment_invalid",
  "payment_settlement_failed",
  "cross_site_request",
  "not_found",
  "model_not_found",
  "model_retired",
  "shutting_down",
  "method_not_allowed",
  "conflict",
  "authorization_already_used",
  "insufficient_earnings",
  "payload_too_large",
  "unprocessable",
  "upstream_unreachable",
  "upstream_auth_failed",
  "upstream_model_missing",
  "rate_limited",
  "internal_error",
  "upstream_error",
  "payment_pending",
  "withdrawal_pending",
  "withdrawal_failed",
  ...NO_OFFER_CODES,
  "service_unavailable",
  "loop_detected",
] as const;

export type AppErrorCode = (typeof APP_ERROR_CODES)[number];

export type AppErrorOptions = {
  /** Extra machine-readable fields placed beside message/type/code in the error body. */
  details?: Record<string, unknown>;
  /** Fields of a protocol the answer must carry as headers (x402's PAYMENT-REQUIRED, Retry-After); the edge writes them. */
  headers?: Record<string, string>;
  cause?: unknown;
};

export class AppError extends Error {
  readonly code: AppErrorCode;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(code: AppErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.details = options.details;
    this.headers = options.headers;
  }
}
