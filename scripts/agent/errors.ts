/** The CLI's failures: one error type with an exit code, and plain-language explanations of API errors. */
import { ApiError } from "../../lib/api-error";

export { ApiError };

export const EXIT = {
  ok: 0,
  /** Anything else: network, server error, unexpected answer. */
  failure: 1,
  /** Bad command line or configuration, or a request the API refused as such (400, 404, 409, 410, 413, 415, 422). */
  usage: 2,
  /** Not signed in, session expired, API key missing/revoked (401, 403). */
  auth: 3,
  /** Not enough money: USDC in the wallet (top-up) or balance / spend limit (chat) (402). */
  funds: 4,
  /** Unavailable now, worth retrying later: no offer at the max price or the service (503), rate limited (429), the upstream failed (502, 504). */
  unavailable: 5,
} as const;

/** The exit code of an API error by its status's class, for the codes explained by none of the cases below. */
export function exitCodeOfStatus(status: number): number {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 402) return EXIT.funds;
  if (status === 429 || status === 502 || status === 503 || status === 504) return EXIT.unavailable;
  if (status >= 400 && status < 500) return EXIT.usage;
  return EXIT.failure;
}

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failure,
    readonly code: string = "failed",
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "CliError";
  }
}

const CLI = "npm run agent --";

/** Turns an API error into what the user should know and do, with the right exit code. */
export function explainApiError(error: ApiError): CliError {
  const b = error.details;
  const requestId = error.headers.get("x-request-id");
  const base = { status: error.status, api_code: error.code, ...(requestId ? { request_id: requestId } : {}) };

  switch (error.code) {
    case "session_required":
      return new CliError(
        `Not signed in, or the session expired: run \`${CLI} login\`. (${error.message})`,
        EXIT.auth,
        "session_expired",
        base,
      );
    case "invalid_api_key":
      return new CliError(
        `The API key is unknown, revoked or expired: create a new one with \`${CLI} keys create\`. (${error.message})`,
        EXIT.auth,
        "api_key_rejected",
        base,
      );
    case "missing_credentials":
      return new CliError(
        `No API key: pass --api-key, set SVC_API_KEY, or run \`${CLI} keys create\`.`,
        EXIT.auth,
        "api_key_missing",
        base,
      );
    case "insufficient_balance":
      return new CliError(
        (b.needed_is === "minimum"
          ? `Balance too low: this request costs at least ${b.needed} USDC (and reserves more), but ${b.available} USDC is available. `
          : `Balance too low: this request reserves up to ${b.needed} USDC, but ${b.available} USDC is available. `) +
          `Top up with \`${CLI} topup <amount>\`, or lower --max-tokens (the worst case is reserved up front).`,
        EXIT.funds,
        "insufficient_balance",
        { ...base, needed: b.needed, needed_is: b.needed_is, available: b.available, price_cents: b.price_cents },
      );
    case "spend_limit_exceeded":
      if (b.limit_reset) {
        return new CliError(
          `This API key's ${b.limit_reset} spend limit (${b.spend_limit} USDC, ${b.period_spent} spent or reserved this period) cannot cover ` +
            `the request's worst case of ${b.needed} USDC. It resets at ${b.limit_resets_at}; or raise it with \`${CLI} keys edit <id> --spend-limit USD\`, or lower --max-tokens.`,
          EXIT.funds,
          "spend_limit_exceeded",
          { ...base, needed: b.needed, spend_limit: b.spend_limit, limit_reset: b.limit_reset, limit_resets_at: b.limit_resets_at },
        );
      }
      return new CliError(
        `This API key's spend limit (${b.spend_limit} USDC) cannot cover the request's worst case of ${b.needed} USDC: raise it with \`${CLI} keys edit <id> --spend-limit USD\` or lower --max-tokens.`,
        EXIT.funds,
        "spend_limit_exceeded",
        { ...base, needed: b.needed, spend_limit: b.spend_limit },
      );
    case "no_offer_at_or_below_max":
    case "no_capacity":
    case "no_healthy_supplier":
      return explainNoOffer(error, base);
    case "payment_invalid":
      if (b.reason === "insufficient_funds") {
        return new CliError(
          `The wallet does not hold enough USDC for this top-up. (${error.message})`,
          EXIT.funds,
          "wallet_insufficient_usdc",
          base,
        );
      }
      return new CliError(
        `The top-up payment was refused (${String(b.reason ?? "invalid")}): ${error.message}`,
        EXIT.funds,
        "payment_invalid",
        base,
      );
    case "rate_limited":
      return new CliError(
        `Rate limited: retry in ${error.headers.get("retry-after") ?? "a few"} s. (${error.message})`,
        EXIT.unavailable,
        "rate_limited",
        base,
      );
    case "max_price_above_key_cap":
      return new CliError(
        `--max-cents is above this API key's cap of ${String(b.key_max_price_cents)} cents/diem, and the API refuses it: a key's cap ` +
          `bounds every request made with it. Pass --max-cents ${String(b.key_max_price_cents)} or less, or raise the cap with ` +
          `\`${CLI} keys edit <id> --max-cents C\`. (${error.message})`,
        EXIT.usage,
        "max_price_above_key_cap",
        { ...base, key_max_price_cents: b.key_max_price_cents },
      );
    default:
      return new CliError(
        `${error.status} ${error.code}: ${error.message}${requestId ? ` (request ${requestId})` : ""}`,
        exitCodeOfStatus(error.status),
        error.code,
        base,
      );
  }
}

/** The 503's X-Svc-* headers, in words: why nothing routed and what max price would. */
function explainNoOffer(error: ApiError, base: Record<string, unknown>): CliError {
  const h = error.headers;
  const code = h.get("x-svc-error-code") ?? error.code;
  const buyerMax = h.get("x-svc-buyer-max-cents");
  const cheapest = h.get("x-svc-cheapest-posted-cents");
  const above = h.get("x-svc-routable-diem-above-max");
  const suggested = error.details.suggested_max_cents;
  const why =
    {
      no_offer_at_or_below_max: "no offer for this model is posted at or below your max price",
      no_capacity: "the offers at or below your max price have no capacity left today for this request's worst case",
      no_healthy_supplier: "every offer at or below your max price is cooling down after upstream failures",
    }[code] ?? error.message;
  const lines = [
    `No offer can take this request (${code}): ${why}.`,
    `  your max price            ${buyerMax ?? "?"} cents/diem   (X-Svc-Buyer-Max-Cents)`,
    `  cheapest posted price     ${cheapest ? `${cheapest} cents/diem` : "none: nobody offers this model"}   (X-Svc-Cheapest-Posted-Cents)`,
    `  routable above your max   ${above ?? "?"} diem today   (X-Svc-Routable-Diem-Above-Max)`,
    typeof suggested === "number"
      ? `  suggested max price       ${suggested} cents/diem: retry with --max-cents ${suggested}`
      : "  no offer above your max could take it either: try later, or lower --max-tokens",
  ];
  return new CliError(lines.join("\n"), EXIT.unavailable, code, {
    ...base,
    buyer_max_cents: buyerMax === null ? null : Number(buyerMax),
    cheapest_posted_cents: cheapest ? Number(cheapest) : null,
    routable_diem_above_max: above,
    suggested_max_cents: typeof suggested === "number" ? suggested : null,
  });
}
