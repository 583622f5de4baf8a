/**
 * AppError (lib/errors.ts) at the edge: each code's HTTP status, OpenAI's error `type` for it, and the
 * `{"error":{"message","type","code"}}` body that route(), the front door and the connection guard answer with.
 * Client-safe: the docs render the status table.
 */
import "server-only";
import { z } from "zod";
import { APP_ERROR_CODES, type AppError, type AppErrorCode } from "@/lib/errors";
import { component } from "@/lib/wire";

export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_json: 400,
  json_too_deep: 400,
  json_too_many_values: 400,
  unsupported_content_type: 400,
  unknown_field: 400,
  stream_not_supported: 400,
  context_length_exceeded: 400,
  max_price_above_key_cap: 400,
  upstream_url_forbidden: 400,
  // The supplier's upstream refused what we forwarded (400/413/422): the request's fault, not the supplier's.
  upstream_rejected_request: 400,
  // Money in and out: amounts, x402 top-ups (spec: malformed payment 400, failed payment 402) and withdrawals.
  invalid_amount: 400,
  amount_out_of_range: 400,
  invalid_payment_header: 400,
  missing_credentials: 401,
  invalid_api_key: 401,
  session_required: 401,
  session_cookie_not_accepted: 401,
  // SIWE sign-in: 400 when the message or signature cannot be read at all, 401 when it reads but proves nothing to us.
  invalid_siwe_message: 400,
  malformed_signature: 400,
  siwe_domain_mismatch: 401,
  siwe_uri_mismatch: 401,
  siwe_wrong_chain: 401,
  siwe_nonce_invalid: 401,
  siwe_expired: 401,
  siwe_not_yet_valid: 401,
  siwe_issued_at_invalid: 401,
  invalid_signature: 401,
  insufficient_balance: 402,
  payment_required: 402,
  spend_limit_exceeded: 402,
  payment_invalid: 402,
  payment_settlement_failed: 402,
  cross_site_request: 403,
  not_found: 404,
  model_not_found: 404,
  // A model the operator retired (npm run catalog -- retire): it existed, it is gone for good.
  model_retired: 410,
  // This instance is draining on SIGTERM (lib/ops/shutdown.ts); another instance serves the retry.
  shutting_down: 503,
  method_not_allowed: 405,
  conflict: 409,
  authorization_already_used: 409,
  insufficient_earnings: 409,
  payload_too_large: 413,
  unprocessable: 422,
  // Supply: the offer's upstream failed the check made when it is posted or its credentials change.
  upstream_unreachable: 422,
  upstream_auth_failed: 422,
  upstream_model_missing: 422,
  rate_limited: 429,
  internal_error: 500,
  upstream_error: 502,
  // The chain did not confirm in time: the payment or withdrawal stays pending and reconciliation resolves it.
  payment_pending: 502,
  withdrawal_pending: 502,
  withdrawal_failed: 502,
  no_offer_at_or_below_max: 503,
  no_capacity: 503,
  no_healthy_supplier: 503,
  service_unavailable: 503,
  // Offers exist, but none serves a feature the request uses.
  no_offer_supports_tools: 503,
  no_offer_supports_json_schema: 503,
  no_offer_supports_vision: 503,
  no_offer_matches_provider_only: 503,
  no_offer_matches_provider_ignore: 503,
  no_offer_matches_provider_quantizations: 503,
  no_offer_matches_provider_data_collection: 503,
  no_offer_matches_provider_cancelled_billing: 503,
  no_offer_matches_provider_max_price: 503,
  no_offer_matches_provider_require_verified: 503,
  no_offer_fits_request: 503,
  no_offer_passing_probes: 503,
  // A chat request carrying svc's own hop header: an offer whose upstream is svc itself.
  loop_detected: 508,
} as const satisfies Record<AppErrorCode, number>;

/** The status an error is answered with. */
export function errorStatus(error: AppError): number {
  return ERROR_STATUS[error.code];
}

/** OpenAI's `type` for a status, so OpenAI SDKs classify our errors as they do theirs. */
export function errorTypeForStatus(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 402) return "payment_required";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

export type ErrorBody = {
  error: { message: string; type: string; code: AppErrorCode } & Record<string, unknown>;
};

export function errorBody(error: AppError): ErrorBody {
  return {
    error: { ...error.details, message: error.message, type: errorTypeForStatus(errorStatus(error)), code: error.code },
  };
}

export const ErrorBodySchema = component(
  "Error",
  z
    .object({
      error: z.looseObject({
        message: z.string(),
        type: z.string().describe("OpenAI's error type for the status, e.g. invalid_request_error"),
        code: z.enum(APP_ERROR_CODES),
      }),
    })
    .describe(
      "Every error: OpenAI's shape. Some codes add machine-readable fields beside message/type/code (e.g. needed, available, param).",
    ),
);
