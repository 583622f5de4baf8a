/** What each error code means, and which codes a route can return only because of how route() guards it. */
import "server-only";
import type { AppErrorCode } from "@/lib/errors";
import type { HttpMethod } from "@/lib/http/openapi/operation";
import type { RouteMeta } from "@/lib/http/route-types";

/** One line per code; a code added to APP_ERROR_CODES (lib/errors.ts) without a line here fails to compile. */
export const ERROR_DESCRIPTIONS = {
  invalid_request: "The body, query or a header failed validation; `param` names the field.",
  invalid_json: "The body is empty or not valid JSON.",
  json_too_deep: "The body nests objects and arrays deeper than the limit `limit_depth` (MAX_JSON_DEPTH).",
  json_too_many_values:
    "The body holds more JSON values (objects, arrays, strings, numbers, literals) than the limit `limit_values` (MAX_JSON_VALUES).",
  unsupported_content_type: "A body was expected with Content-Type: application/json.",
  unknown_field: "The body or query has a field this route does not take (they are strict, so typos are caught).",
  stream_not_supported: "`stream: true` on chat completions; v1 answers in one piece only.",
  context_length_exceeded: "The messages alone fill the model's context window.",
  max_price_above_key_cap: "X-Svc-Max-Cents is above the API key's own max price cap.",
  upstream_url_forbidden: "An offer's upstream URL is not https or points at a private address.",
  invalid_amount: "An amount is not a USD decimal string with at most 6 decimals.",
  amount_out_of_range: "An amount is below the minimum or above the maximum; `min`/`max` say which.",
  invalid_payment_header: "PAYMENT-SIGNATURE / X-PAYMENT is not a base64 x402 payment payload.",
  missing_credentials: "The route needs Authorization: Bearer svc_… (the generation lookup also takes the svc_session cookie).",
  invalid_api_key: "The API key is unknown, revoked or expired.",
  session_required: "The route needs the svc_session cookie of a live wallet session (or an API key was sent to it).",
  session_cookie_not_accepted: "A svc_session cookie was sent to the inference endpoint, which takes only API keys.",
  invalid_siwe_message: "The message is not an EIP-4361 message built from GET /auth/nonce.",
  malformed_signature: "The signature is not 0x-prefixed hex.",
  siwe_domain_mismatch: "The message signs in to another site than this deployment.",
  siwe_uri_mismatch: "The message's URI is not on this deployment's origin.",
  siwe_wrong_chain: "The message's Chain ID is not 8453 (Base).",
  siwe_nonce_invalid: "The nonce is unknown, already used, expired or issued for another wallet.",
  siwe_expired: "The message's Expiration Time has passed.",
  siwe_not_yet_valid: "The message's Not Before time lies in the future.",
  siwe_issued_at_invalid: "The message's Issued At is in the future or too old.",
  invalid_signature: "The signature does not prove control of the wallet (EOA, EIP-1271 and EIP-6492 are checked).",
  insufficient_balance:
    "The balance cannot cover the request: `needed` against `available`, USDC. `needed_is` says what `needed` is: `reservation` (the worst case reserved at the offer's `price_cents`, prompt plus max_tokens or the model's output cap; `reservation` repeats it) or `minimum` (even the least the request can cost is more than the balance; the reservation would be higher, `reservation` is null).",
  payment_required: "Payment is required before this call can proceed.",
  spend_limit_exceeded:
    "The API key's spend limit (its current period's, when it resets daily, weekly or monthly) cannot cover the request's worst case.",
  payment_invalid:
    "The x402 payment does not match what was asked (amount, payee, network, validity) or did not verify; `reason` says why.",
  payment_settlement_failed: "The USDC transfer did not go through; nothing was credited.",
  cross_site_request: "A session mutation came from another site (Origin / Sec-Fetch-Site).",
  not_found: "No such route, or no such object among yours.",
  model_not_found: "Unknown model; GET /v1/models lists them.",
  shutting_down: "This instance is shutting down; nothing was charged. Retry (another instance serves it).",
  model_retired: "The model was retired by the operator and is no longer served; GET /v1/models lists the current ones.",
  method_not_allowed:
    "The path does not take this method: the front door answers any method a path does not serve with 405 and `Allow` (listing the methods it does), so every operation lists it for its path.",
  conflict: "The object's state forbids the change (e.g. a withdrawn offer).",
  authorization_already_used: "This payment authorization was already submitted; sign a new one.",
  insufficient_earnings: "The withdrawal is more than the available earnings.",
  payload_too_large: "The body is larger than the configured limit.",
  unprocessable: "The request is well-formed but cannot be done (e.g. too many open offers).",
  upstream_unreachable: "The offer's upstream did not answer GET /models as an OpenAI-compatible API.",
  upstream_auth_failed: "The offer's upstream refused its API key.",
  upstream_model_missing: "The offer's upstream does not list a model the offer names.",
  rate_limited: "Too many requests this minute, per key or per IP; wait Retry-After seconds.",
  internal_error: "Our bug; quote the X-Request-Id when reporting it.",
  upstream_error: "The supplier's upstream failed or timed out; nothing was charged and the request was not retried.",
  upstream_rejected_request:
    "The supplier's upstream refused the request as invalid (HTTP 400, 413 or 422); nothing was charged and it does not count against the offer.",
  payment_pending: "The USDC transfer was sent but not yet confirmed; it is credited automatically. Do not sign again.",
  withdrawal_pending: "The withdrawal transfer was sent but not yet confirmed; reconciliation finishes it.",
  withdrawal_failed: "The withdrawal transfer failed; the earnings were restored.",
  no_offer_at_or_below_max: "No offer for the model is posted at or below your max price (see the X-Svc-* headers).",
  no_capacity: "Offers at or below your max price have no capacity left today for this request's worst case.",
  no_healthy_supplier: "Every offer at or below your max price is cooling down after upstream failures.",
  service_unavailable:
    "A dependency (the database, the chain) is unavailable: retry after `Retry-After` seconds. Nothing was charged. Any route that reads the database can answer it during an outage.",
  no_offer_supports_tools: "No offer for the model serves function tools right now (see the X-Svc-* headers).",
  no_offer_supports_json_schema: "No offer for the model serves json_schema structured outputs right now (see the X-Svc-* headers).",
  no_offer_supports_vision: "No offer for the model serves image inputs right now (see the X-Svc-* headers).",
  no_offer_matches_provider_only:
    "Your provider preferences (the request's provider object over the key's and the account's) leave no offer: none serving the request is among the offers and suppliers provider.only lists (see the X-Svc-* headers).",
  no_offer_matches_provider_ignore:
    "Your provider preferences leave no offer: provider.ignore sets aside every offer the earlier preferences leave.",
  no_offer_matches_provider_quantizations:
    "Your provider preferences leave no offer: none left declares a quantization provider.quantizations allows.",
  no_offer_matches_provider_data_collection:
    "Your provider preferences leave no offer: every offer left retains prompts or trains on them (provider.data_collection: deny).",
  no_offer_matches_provider_cancelled_billing:
    "Your provider preferences leave no offer: every offer left bills a cancelled stream in full (provider.cancelled_billing: deny).",
  no_offer_matches_provider_max_price:
    "Your provider preferences leave no offer: every offer left charges more per 1M tokens than provider.max_price.",
  no_offer_matches_provider_require_verified:
    "Your provider preferences leave no offer: none left has passed its fidelity probes (provider.require_verified: true); unprobed, unverified, verifying and flagged offers are excluded.",
  no_offer_fits_request:
    "The offers left declare a smaller context or output cap than this request's worst case (its prompt and max_tokens, or the model's output cap without max_tokens).",
  no_offer_passing_probes: "Every offer at or below your max price is off the book after failing a fidelity probe.",
  loop_detected: "The request came from an svc router (X-Svc-Hop): an offer's upstream points back at svc.",
} satisfies Record<AppErrorCode, string>;

const SAFE_METHODS = new Set<HttpMethod>(["GET", "HEAD", "OPTIONS"]);

/** What route() answers for any body: its type, its JSON, its size (lib/http/body.ts), then the route's schema. */
const BODY_GUARD_CODES: AppErrorCode[] = [
  "unsupported_content_type",
  "invalid_json",
  "json_too_deep",
  "json_too_many_values",
  "payload_too_large",
  "invalid_request",
  "unknown_field",
];

/** Codes every route with these guards can return before its own code runs (route(), lib/http/body.ts). */
export function guardErrors(meta: RouteMeta, method: HttpMethod): AppErrorCode[] {
  const codes: AppErrorCode[] = [];
  if (meta.auth === "session") codes.push("session_required", ...(SAFE_METHODS.has(method) ? [] : (["cross_site_request"] as const)));
  if (meta.auth === "bearer") codes.push("missing_credentials", "invalid_api_key", "session_cookie_not_accepted");
  if (meta.auth === "key_or_session") {
    codes.push(
      "missing_credentials",
      "invalid_api_key",
      "session_required",
      ...(SAFE_METHODS.has(method) ? [] : (["cross_site_request"] as const)),
    );
  }
  if (meta.rateLimit) codes.push("rate_limited");
  if (meta.body) codes.push(...BODY_GUARD_CODES);
  if (meta.query) codes.push("invalid_request", "unknown_field");
  // route() answers a database outage with 503 service_unavailable (Retry-After); the front door answers 503
  // shutting_down while the instance drains, and 405 to any method the path does not serve.
  codes.push("internal_error", "service_unavailable", "shutting_down", "method_not_allowed");
  return codes;
}
