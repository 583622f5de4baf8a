import "server-only";
import { AppError } from "@/lib/errors";
import { formatMicros } from "@/lib/money";
import { upstreamErrorMessage } from "@/lib/upstream/answer";
import type { ForwardFailure } from "@/lib/router/upstream-failure";

/**
 * The errors a chat completion is refused or failed with, worded once (lib/router/complete.ts throws them): each
 * names what the buyer can change, and any that comes after the reservation says nothing was charged. Builders
 * return the error and never throw it, so the caller's control flow stays visible where it is decided.
 */

export function streamNotSupported() {
  return new AppError("stream_not_supported", "stream: true is not supported in v1; send stream: false or omit it.", {
    details: { param: "stream" },
  });
}

export function maxPriceAboveKeyCap(requestedMaxPriceCents: number | null, keyMaxPriceCents: number | null) {
  return new AppError(
    "max_price_above_key_cap",
    `X-Svc-Max-Cents: ${requestedMaxPriceCents} is above this API key's cap of ${keyMaxPriceCents} cents per diem.`,
    { details: { key_max_price_cents: keyMaxPriceCents } },
  );
}

/**
 * The balance cannot cover the request. Two ways to know it: the reservation (its worst case at the chosen offer's
 * price, `priceCents` given) exceeds the available balance; or, before anything is counted or reserved, even the least
 * the request can cost (its smallest prompt and one output token at the cheapest price, `priceCents` null) does.
 * `needed` is that figure, and `needed_is` says which one it is: `reservation` (what must be available for the
 * request to go through) or `minimum` (the reservation would be higher still).
 */
export function insufficientBalance(r: { amountMicros: bigint; priceCents: number | null }, available: bigint) {
  const needed = formatMicros(r.amountMicros);
  const reserving = r.priceCents !== null;
  const cost = reserving
    ? `reserves its worst case, ${needed} USDC at ${r.priceCents} cents per diem (prompt plus max_tokens, or the model's output cap; the unused part is released after the answer)`
    : `costs at least ${needed} USDC (its smallest prompt and one output token at the cheapest price; its reservation, prompt plus max_tokens, is more)`;
  return new AppError(
    "insufficient_balance",
    `This request ${cost}, but your available balance is ${formatMicros(available)} USDC. Top up with POST /v1/x402/top-up, or lower max_tokens.`,
    {
      details: {
        needed,
        needed_is: reserving ? "reservation" : "minimum",
        reservation: reserving ? needed : null,
        available: formatMicros(available),
        price_cents: r.priceCents,
      },
    },
  );
}

/**
 * The key's spend limit cannot cover the request's worst case (its reservation). `period` is given when the limit
 * resets: the limit is then the current period's, and the answer says when it starts again.
 */
export function spendLimitExceeded(
  spendLimitMicros: bigint | null,
  amountMicros: bigint,
  period: { reset: string; spentMicros: bigint; resetsAt: Date } | null = null,
) {
  const limit = formatMicros(spendLimitMicros ?? 0n);
  const details = { limit: "key_spend_limit", spend_limit: limit, needed: formatMicros(amountMicros) };
  if (period === null) {
    return new AppError(
      "spend_limit_exceeded",
      `This API key's spend limit (${limit} USDC) cannot cover this request's worst case of ${formatMicros(amountMicros)} USDC. Raise the limit or use another key.`,
      { details },
    );
  }
  return new AppError(
    "spend_limit_exceeded",
    `This API key's ${period.reset} spend limit (${limit} USDC, of which ${formatMicros(period.spentMicros)} is spent or reserved this period) ` +
      `cannot cover this request's worst case of ${formatMicros(amountMicros)} USDC. It resets at ${period.resetsAt.toISOString()}; ` +
      "raise the limit, lower max_tokens or use another key.",
    {
      details: {
        ...details,
        limit_reset: period.reset,
        period_spent: formatMicros(period.spentMicros),
        limit_resets_at: period.resetsAt.toISOString(),
      },
    },
  );
}

/** The upstream answered 400, 413 or 422 to our validated request: the request's to change, never the offer's fault. */
export function requestRejected(status: number, json: unknown) {
  const said = upstreamErrorMessage(json);
  return new AppError(
    "upstream_rejected_request",
    `The supplier's upstream rejected this request (HTTP ${status}${said ? `: ${said}` : ""}). Nothing was charged, and it does not count against the offer.`,
    { details: { upstream_status: status } },
  );
}

/** The upstream failed after the hold was released; `counted` says whether the failure counts against the offer. */
export function upstreamFailed(failure: ForwardFailure, counted: boolean) {
  return new AppError(
    "upstream_error",
    `The supplier's upstream failed (${failure.reason}); nothing was charged and the request was not retried. ` +
      (counted
        ? "Retrying may route to another offer."
        : failure.cause === "explained"
          ? "This request asks for an answer that large or that long (its max_tokens, logprobs or schema), so it does not count against the offer; ask for less to be served."
          : "It does not count against the offer; retry."),
    { details: { upstream_failure: failure.reason } },
  );
}

/** stream_options on a request that does not stream: refused as OpenAI refuses it (v2; v1 refuses streaming whole). */
export function streamOptionsWithoutStream() {
  return new AppError("invalid_request", "The 'stream_options' parameter is only allowed when 'stream' is enabled.", {
    details: { param: "stream_options" },
  });
}

/** A stream that broke after it began: what it was charged (by svc's count of what arrived), or that nothing was. */
export function streamFailed(failure: ForwardFailure, counted: boolean, charged: string | null) {
  const money = charged === null ? "nothing was charged" : `${charged} USDC was charged for what arrived, by svc's own count`;
  return new AppError(
    "upstream_error",
    `The supplier's upstream failed mid-stream (${failure.reason}); ${money}. ` +
      (counted ? "Retrying may route to another offer." : "It does not count against the offer."),
    { details: { upstream_failure: failure.reason } },
  );
}

/** Too many streams open at once for one key or one account (per instance): 429, like the rate limits. */
export function tooManyStreams(scope: "key" | "account", limit: number) {
  return new AppError(
    "rate_limited",
    `At most ${limit} streams may be open at once per ${scope === "key" ? "API key" : "account"}; wait for one to end.`,
    {
      headers: { "retry-after": "1", "x-ratelimit-limit": String(limit), "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1" },
      details: { limit, scope: `${scope}_streams` },
    },
  );
}
