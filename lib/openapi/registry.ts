/**
 * Every route of the app, described: path, summary, success shape and the errors its domain code throws.
 * Auth class, body and query are not written here: they are read from the handler (`handler.meta`, set by
 * route()), so the description cannot say something the route does not enforce.
 * tests/integration/openapi.test.ts checks this list against the route files on disk.
 */
import type { z } from "zod";
import * as authLogout from "@/app/auth/logout/route";
import * as authNonce from "@/app/auth/nonce/route";
import * as authSession from "@/app/auth/session/route";
import * as authVerify from "@/app/auth/verify/route";
import * as healthLedger from "@/app/healthz/ledger/route";
import * as health from "@/app/healthz/route";
import * as openapi from "@/app/openapi.json/route";
import * as v1NotFound from "@/app/v1/[...path]/route";
import * as apiKey from "@/app/v1/account/api-keys/[id]/route";
import * as apiKeys from "@/app/v1/account/api-keys/route";
import * as balance from "@/app/v1/account/balance/route";
import * as ledger from "@/app/v1/account/ledger/route";
import * as account from "@/app/v1/account/route";
import * as usageDaily from "@/app/v1/account/usage/daily/route";
import * as usage from "@/app/v1/account/usage/route";
import * as chat from "@/app/v1/chat/completions/route";
import * as book from "@/app/v1/market/book/route";
import * as marketModels from "@/app/v1/market/models/route";
import * as stats from "@/app/v1/market/stats/route";
import * as trades from "@/app/v1/market/trades/route";
import * as models from "@/app/v1/models/route";
import * as earnings from "@/app/v1/supply/earnings/route";
import * as offer from "@/app/v1/supply/offers/[id]/route";
import * as offers from "@/app/v1/supply/offers/route";
import * as pool from "@/app/v1/supply/pool/summary/route";
import * as withdrawals from "@/app/v1/supply/withdrawals/route";
import * as topUp from "@/app/v1/x402/top-up/route";
import type { AppErrorCode } from "@/lib/http/errors";
import type { RouteHandler } from "@/lib/http/route";
import type { RequestHeaderName, ResponseHeaderName } from "@/lib/openapi/headers";
import * as S from "@/lib/openapi/schemas";

export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export type Tag = "Auth" | "Account" | "Inference" | "Payments" | "Market" | "Supply" | "Operations";

export type ResponseSpec = {
  status: number;
  description: string;
  /** The body's schema; none for an empty body (204). */
  schema?: z.ZodType;
  headers?: ResponseHeaderName[];
};

export type OperationSpec = {
  method: HttpMethod;
  /** OpenAPI path template: `/v1/account/api-keys/{id}`. */
  path: string;
  handler: RouteHandler;
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  /** Path parameters, by name: their description. */
  pathParams?: Record<string, string>;
  /** The last path parameter takes the rest of the path, slashes included (Next's `[...name]`). */
  catchAll?: boolean;
  requestHeaders?: RequestHeaderName[];
  /** Answers other than errors (the success, and e.g. a 402 challenge or a 503 health report). */
  responses: ResponseSpec[];
  /** Error codes the route's own code can throw; route()'s guards add theirs (lib/openapi/errors.ts). */
  errors: AppErrorCode[];
  /** Extra headers on the error answers of a status (e.g. the X-Svc-* explanation of a 503). */
  errorHeaders?: Partial<Record<number, ResponseHeaderName[]>>;
};

const ok = (schema: z.ZodType, description: string, headers?: ResponseHeaderName[]): ResponseSpec => ({ status: 200, schema, description, headers });
const created = (schema: z.ZodType, description: string): ResponseSpec => ({ status: 201, schema, description });

const OFFER_ID = { id: "The offer's id (UUID)." };
const UPSTREAM_CHECK: AppErrorCode[] = ["upstream_url_forbidden", "upstream_unreachable", "upstream_auth_failed", "upstream_model_missing"];

function describeRoutes(): OperationSpec[] {
  return [
    // ─── auth ──────────────────────────────────────────────────────────────
    {
      method: "GET",
      path: "/auth/nonce",
      handler: authNonce.GET,
      operationId: "getNonce",
      tag: "Auth",
      summary: "Get a sign-in nonce",
      description: "A single-use nonce bound to the wallet (valid 10 minutes), with every other field the EIP-4361 message needs.",
      responses: [ok(S.SiweChallengeSchema, "The fields of the message to sign.")],
      errors: [],
    },
    {
      method: "POST",
      path: "/auth/verify",
      handler: authVerify.POST,
      operationId: "verifySignIn",
      tag: "Auth",
      summary: "Sign in with a signed SIWE message",
      description:
        "Checks the message (domain = this host, uri on this origin, chainId 8453, our unused nonce, time window) and the signature (EOA, EIP-1271, EIP-6492), then opens a session: the token travels only in the HttpOnly svc_session cookie.",
      responses: [ok(S.SessionSchema, "Signed in; the svc_session cookie is set.", ["SetCookie"])],
      errors: [
        "cross_site_request",
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
      ],
    },
    {
      method: "GET",
      path: "/auth/session",
      handler: authSession.GET,
      operationId: "getSession",
      tag: "Auth",
      summary: "Who is signed in",
      responses: [ok(S.SessionSchema, "The session's wallet and expiry.")],
      errors: [],
    },
    {
      method: "POST",
      path: "/auth/logout",
      handler: authLogout.POST,
      operationId: "logout",
      tag: "Auth",
      summary: "Sign out",
      description: "Revokes the session server-side (the cookie stops working wherever it was copied to) and clears the cookie.",
      responses: [{ status: 204, description: "Signed out.", headers: ["SetCookie"] }],
      errors: [],
    },

    // ─── account ───────────────────────────────────────────────────────────
    {
      method: "GET",
      path: "/v1/account",
      handler: account.GET,
      operationId: "getAccount",
      tag: "Account",
      summary: "The signed-in account",
      description: "Wallet, buyer balance (total, held, available) and max-price defaults.",
      responses: [ok(S.AccountSchema, "The account.")],
      errors: [],
    },
    {
      method: "PATCH",
      path: "/v1/account",
      handler: account.PATCH,
      operationId: "updateAccount",
      tag: "Account",
      summary: "Set the account's default max price",
      description: "Cents per diem the account pays at most when neither the request nor the key says; null = the platform default.",
      responses: [ok(S.AccountSchema, "The updated account.")],
      errors: [],
    },
    {
      method: "GET",
      path: "/v1/account/balance",
      handler: balance.GET,
      operationId: "getBalance",
      tag: "Account",
      summary: "The prepaid balance",
      responses: [ok(S.BalanceSchema, "Available to spend, held by in-flight requests, and their total.")],
      errors: [],
    },
    {
      method: "POST",
      path: "/v1/account/api-keys",
      handler: apiKeys.POST,
      operationId: "createApiKey",
      tag: "Account",
      summary: "Create an API key",
      description: "A Bearer key for POST /v1/chat/completions, with an optional max price cap and spend limit. The secret is returned only here.",
      responses: [created(S.CreatedApiKeySchema, "The key, with its secret `key` (shown once).")],
      errors: [],
    },
    {
      method: "GET",
      path: "/v1/account/api-keys",
      handler: apiKeys.GET,
      operationId: "listApiKeys",
      tag: "Account",
      summary: "List API keys",
      description: "Newest first, revoked ones included; never a secret.",
      responses: [ok(S.ApiKeyListSchema, "The account's keys.")],
      errors: [],
    },
    {
      method: "DELETE",
      path: "/v1/account/api-keys/{id}",
      handler: apiKey.DELETE,
      operationId: "revokeApiKey",
      tag: "Account",
      summary: "Revoke an API key",
      description: "Refused from the next request on. Idempotent; another account's key is a 404 like an unknown one.",
      pathParams: { id: "The key's id (UUID)." },
      responses: [ok(S.ApiKeySchema, "The revoked key.")],
      errors: ["not_found"],
    },
    {
      method: "GET",
      path: "/v1/account/ledger",
      handler: ledger.GET,
      operationId: "listLedger",
      tag: "Account",
      summary: "The account's ledger lines",
      description: "Newest first, signed from this account's point of view; pass `nextCursor` as `cursor` for the next page.",
      responses: [ok(S.LedgerPageSchema, "One page of ledger lines.")],
      errors: [],
    },
    {
      method: "GET",
      path: "/v1/account/usage",
      handler: usage.GET,
      operationId: "listUsage",
      tag: "Account",
      summary: "The account's completions",
      description: "Newest first: key, model, tokens, burn, price and cost of each completion.",
      responses: [ok(S.UsagePageSchema, "One page of completions.")],
      errors: [],
    },
    {
      method: "GET",
      path: "/v1/account/usage/daily",
      handler: usageDaily.GET,
      operationId: "listDailySpend",
      tag: "Account",
      summary: "Spend per UTC day",
      responses: [ok(S.DailySpendListSchema, "Days with use, oldest first.")],
      errors: [],
    },

    // ─── payments ──────────────────────────────────────────────────────────
    {
      method: "POST",
      path: "/v1/x402/top-up",
      handler: topUp.POST,
      operationId: "topUp",
      tag: "Payments",
      summary: "Fund the balance with USDC over x402",
      description:
        "Without a payment header: 402 asking for exactly `amount` in USDC on Base, payable to the treasury, from the signed-in wallet (`extra.payer`; an authorization from any other wallet is refused). Sign an EIP-3009 transferWithAuthorization for it with that wallet and retry the same request with PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1): the payment is verified, settled on chain, and credited once.",
      requestHeaders: ["PaymentSignatureHeader", "XPaymentHeader"],
      responses: [
        ok(S.TopUpSchema, "Paid and credited.", ["PaymentResponse"]),
        { status: 402, schema: S.PaymentChallengeSchema, description: "Payment required for exactly this amount.", headers: ["PaymentRequired"] },
      ],
      errors: [
        "invalid_amount",
        "amount_out_of_range",
        "invalid_payment_header",
        "payment_invalid",
        "payment_settlement_failed",
        "authorization_already_used",
        "payment_pending",
        "service_unavailable",
      ],
      errorHeaders: { 402: ["PaymentRequired", "PaymentResponse"] },
    },

    // ─── inference ─────────────────────────────────────────────────────────
    {
      method: "POST",
      path: "/v1/chat/completions",
      handler: chat.POST,
      operationId: "createChatCompletion",
      tag: "Inference",
      summary: "Create a chat completion",
      description:
        "OpenAI-compatible. Reserves the worst case (prompt plus max_tokens, or the model's output cap, at the chosen offer's price) on the cheapest eligible offer at or below your max price, forwards once, then charges the actual usage and releases the rest. `stream: true` is refused.",
      requestHeaders: ["MaxCentsHeader"],
      responses: [ok(S.ChatCompletionSchema, "The completion; the headers say what it cost.", ["BalanceRemaining", "SvcCost", "SvcPriceCents", "SvcBurnDiem", "SvcMaxCents"])],
      errors: [
        "stream_not_supported",
        "context_length_exceeded",
        "max_price_above_key_cap",
        "model_not_found",
        "insufficient_balance",
        "spend_limit_exceeded",
        "upstream_error",
        "no_offer_at_or_below_max",
        "no_capacity",
        "no_healthy_supplier",
      ],
      errorHeaders: { 503: ["SvcErrorCode", "SvcBuyerMaxCents", "SvcCheapestPostedCents", "SvcRoutableDiemAboveMax"] },
    },

    // ─── market ────────────────────────────────────────────────────────────
    {
      method: "GET",
      path: "/v1/models",
      handler: models.GET,
      operationId: "listModels",
      tag: "Market",
      summary: "List models",
      description: "The buyable models in OpenAI's list shape, with list price and the best posted price.",
      responses: [ok(S.ModelListSchema, "The models.")],
      errors: [],
    },
    {
      method: "GET",
      path: "/v1/market/book",
      handler: book.GET,
      operationId: "getBook",
      tag: "Market",
      summary: "A model's order book",
      responses: [ok(S.BookSchema, "Price levels with capacity left today, cheapest first.")],
      errors: ["model_not_found"],
    },
    {
      method: "GET",
      path: "/v1/market/models",
      handler: marketModels.GET,
      operationId: "listMarketModels",
      tag: "Market",
      summary: "Models on the market",
      responses: [ok(S.MarketModelListSchema, "Every model with list price, best price, capacity and supplier count.")],
      errors: [],
    },
    {
      method: "GET",
      path: "/v1/market/stats",
      handler: stats.GET,
      operationId: "getMarketStats",
      tag: "Market",
      summary: "Market statistics, last 24 h",
      responses: [ok(S.MarketStatsSchema, "Clears, volume in USDC and diem, VWAP per model.")],
      errors: [],
    },
    {
      method: "GET",
      path: "/v1/market/trades",
      handler: trades.GET,
      operationId: "listTrades",
      tag: "Market",
      summary: "Recent trades",
      responses: [ok(S.TradeListSchema, "Recent clears, newest first, without identities.")],
      errors: ["model_not_found"],
    },

    // ─── supply ────────────────────────────────────────────────────────────
    {
      method: "GET",
      path: "/v1/supply/pool/summary",
      handler: pool.GET,
      operationId: "getPoolSummary",
      tag: "Supply",
      summary: "Today's supply pool",
      responses: [ok(S.PoolSummarySchema, "Suppliers, capacity, prices and utilisation today (UTC).")],
      errors: [],
    },
    {
      method: "GET",
      path: "/v1/supply/offers",
      handler: offers.GET,
      operationId: "listOffers",
      tag: "Supply",
      summary: "List your offers",
      responses: [ok(S.OfferListSchema, "Your offers with today's capacity, earnings and health.")],
      errors: [],
    },
    {
      method: "POST",
      path: "/v1/supply/offers",
      handler: offers.POST,
      operationId: "createOffer",
      tag: "Supply",
      summary: "Post an offer",
      description: "The upstream is checked first (GET {upstreamBaseUrl}/models with the key); the key is stored encrypted and never returned.",
      responses: [created(S.CheckedOfferSchema, "The posted offer.")],
      errors: [...UPSTREAM_CHECK, "unprocessable"],
    },
    {
      method: "GET",
      path: "/v1/supply/offers/{id}",
      handler: offer.GET,
      operationId: "getOffer",
      tag: "Supply",
      summary: "One of your offers",
      pathParams: OFFER_ID,
      responses: [ok(S.OfferSchema, "The offer.")],
      errors: ["not_found"],
    },
    {
      method: "PATCH",
      path: "/v1/supply/offers/{id}",
      handler: offer.PATCH,
      operationId: "updateOffer",
      tag: "Supply",
      summary: "Change an offer",
      description: "Price, capacity, models, credentials, or pause/resume. A new URL, key or model list is checked against the upstream first.",
      pathParams: OFFER_ID,
      responses: [ok(S.CheckedOfferSchema, "The changed offer.")],
      errors: ["not_found", "conflict", ...UPSTREAM_CHECK],
    },
    {
      method: "DELETE",
      path: "/v1/supply/offers/{id}",
      handler: offer.DELETE,
      operationId: "withdrawOffer",
      tag: "Supply",
      summary: "Withdraw an offer",
      description: "Off the book for good; kept for history. Idempotent.",
      pathParams: OFFER_ID,
      responses: [ok(S.OfferSchema, "The withdrawn offer.")],
      errors: ["not_found"],
    },
    {
      method: "GET",
      path: "/v1/supply/earnings",
      handler: earnings.GET,
      operationId: "getEarnings",
      tag: "Supply",
      summary: "Your earnings",
      responses: [ok(S.EarningsSchema, "Available to withdraw, withdrawn, and in flight.")],
      errors: [],
    },
    {
      method: "GET",
      path: "/v1/supply/withdrawals",
      handler: withdrawals.GET,
      operationId: "listWithdrawals",
      tag: "Supply",
      summary: "List your withdrawals",
      responses: [ok(S.WithdrawalListSchema, "Newest first.")],
      errors: [],
    },
    {
      method: "POST",
      path: "/v1/supply/withdrawals",
      handler: withdrawals.POST,
      operationId: "createWithdrawal",
      tag: "Supply",
      summary: "Withdraw earnings as USDC",
      description: "Sent on chain to the signed-in wallet (never to an address from the body).",
      responses: [created(S.WithdrawalSchema, "Sent.")],
      errors: ["invalid_amount", "amount_out_of_range", "insufficient_earnings", "withdrawal_failed", "withdrawal_pending"],
    },

    // ─── operations ────────────────────────────────────────────────────────
    {
      method: "GET",
      path: "/healthz",
      handler: health.GET,
      operationId: "getHealth",
      tag: "Operations",
      summary: "Health check",
      responses: [ok(S.HealthSchema, "Database and chain answer."), { status: 503, schema: S.HealthSchema, description: "Degraded: one of them does not (which one is logged, not answered)." }],
      errors: [],
    },
    {
      method: "GET",
      path: "/healthz/ledger",
      handler: healthLedger.GET,
      operationId: "getLedgerHealth",
      tag: "Operations",
      summary: "Ledger invariants",
      responses: [
        ok(S.LedgerHealthSchema, "The invariants hold."),
        { status: 503, schema: S.LedgerHealthSchema, description: "Violations found (a count, never accounts), or the check failed." },
      ],
      errors: [],
    },
    {
      method: "GET",
      path: "/openapi.json",
      handler: openapi.GET,
      operationId: "getOpenApiDocument",
      tag: "Operations",
      summary: "This OpenAPI 3.1 description",
      responses: [ok(S.OpenApiDocumentSchema, "The document.")],
      errors: [],
    },
    ...(["GET", "POST", "PUT", "PATCH", "DELETE"] as const).map(
      (method): OperationSpec => ({
        method,
        path: "/v1/{path}",
        handler: v1NotFound[method],
        operationId: `unknownV1Route${method[0]}${method.slice(1).toLowerCase()}`,
        tag: "Operations",
        summary: "Any other /v1 path",
        description: "Answers a JSON 404 in the API's error shape (instead of an HTML page) for every /v1 path no route above serves.",
        pathParams: { path: "The rest of the path (may contain slashes)." },
        catchAll: true,
        responses: [],
        errors: ["not_found"],
      }),
    ),
  ];
}

let cached: OperationSpec[] | undefined;

/**
 * The described operations. Built on first call, not at import: app/openapi.json/route.ts is itself in the
 * list, and it imports this module.
 */
export function listOperations(): OperationSpec[] {
  cached ??= describeRoutes();
  return cached;
}
