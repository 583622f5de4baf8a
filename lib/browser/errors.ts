import { ApiError } from "@/lib/browser/api";
import type { PaymentFailureReason } from "@/lib/payments/schemas";

/**
 * One sentence a person can act on, for any error the dashboard can meet: API errors by code, wallet
 * errors by kind. Nothing raw (stack traces, JSON, RPC dumps) ever reaches the page.
 */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return describeApiError(error);
  return describeWalletError(error);
}

const usd = (value: unknown) => (typeof value === "string" ? `$${trimUsd(value)}` : "the allowed amount");

function trimUsd(value: string): string {
  const [whole, fraction = ""] = value.split(".");
  const trimmed = fraction.replace(/0+$/, "");
  return `${whole}.${trimmed.padEnd(2, "0")}`;
}

const START_AGAIN = "Start a new top-up: nothing was charged.";

/** What each refusal reason of the server means to the person paying; a reason added there fails to compile here. */
const PAYMENT_REASONS: Record<PaymentFailureReason, string> = {
  unsupported_payload: "Your wallet signed a payment svc does not take (an EIP-3009 USDC authorization is needed). " + START_AGAIN,
  scheme_mismatch: "The payment used another x402 scheme than svc asked for. " + START_AGAIN,
  asset_mismatch: "The payment was not in USDC on Base. " + START_AGAIN,
  authorization_not_yet_valid: "The payment authorization is not valid yet; check your device's clock, then try again.",
  authorization_validity_too_long: "The payment authorization stays valid for longer than svc accepts. " + START_AGAIN,
  verification_failed: "The payment did not verify on Base. Nothing was charged; try again.",
  insufficient_funds: "Your wallet doesn't hold enough USDC for this top-up.",
  authorization_expired: "The payment authorization expired before it reached svc. Try again.",
  invalid_signature: "The payment signature didn't verify for USDC on Base. Try again.",
  recipient_mismatch: "The payment was addressed to the wrong recipient. Start a new top-up.",
  amount_mismatch: "The signed amount didn't match the top-up. Start a new top-up.",
  network_mismatch: "The payment must be made on Base. Switch your wallet to Base and try again.",
  undeployed_smart_wallet: "Your smart wallet isn't deployed on Base yet. Make one transaction with it first, then top up.",
  payer_mismatch: "Pay from the wallet you are signed in with: svc credits a top-up only to the wallet that signed it.",
};

function describeApiError(error: ApiError): string {
  const d = error.details;
  switch (error.code) {
    case "network_error":
      return "Can't reach svc right now. Check your connection and try again.";
    case "session_required":
      return "You were signed out. Sign in again, then repeat this: what you entered is kept.";
    case "wallet_account_changed":
    case "wallet_insufficient_usdc":
    case "dev_wallet_refused":
    case "payment_cancelled":
      // Written on this page, with the addresses and amounts involved: already the specific sentence.
      return error.message;
    case "cross_site_request":
      return "The request was blocked because it didn't come from this page. Reload and try again.";
    case "siwe_domain_mismatch":
    case "siwe_uri_mismatch":
      return "The sign-in message was made for a different site. Reload the page and sign in again.";
    case "siwe_wrong_chain":
      return "Switch your wallet to Base, then sign in again.";
    case "siwe_nonce_invalid":
    case "siwe_expired":
    case "siwe_not_yet_valid":
    case "siwe_issued_at_invalid":
      return "That sign-in request expired. Sign in again (and check your device's clock if this repeats).";
    case "invalid_signature":
    case "malformed_signature":
      return "The signature doesn't match your wallet address. Try signing in again.";
    case "invalid_siwe_message":
      return "Your wallet changed the sign-in message. Try again, or use another wallet.";
    case "rate_limited":
      return "Too many requests. Wait a moment and try again.";
    case "invalid_amount":
      return "Enter an amount like 10 or 10.50.";
    case "amount_out_of_range":
      return d.max !== undefined ? `Enter an amount between ${usd(d.min)} and ${usd(d.max)}.` : `Enter at least ${usd(d.min)}.`;
    case "payment_invalid":
      return PAYMENT_REASONS[String(d.reason) as PaymentFailureReason] ?? "The payment was not accepted. Nothing was charged; try again.";
    case "authorization_already_used":
      return "This payment authorization was already used. Start a new top-up.";
    case "payment_settlement_failed":
      return "The USDC transfer didn't go through, so nothing was charged. Try again.";
    case "payment_pending":
      return "Your transfer was sent but isn't confirmed yet. Don't pay again: it is credited automatically once Base confirms it.";
    case "service_unavailable":
      return "This service is briefly unavailable. Nothing was charged; try again in a minute.";
    case "insufficient_earnings":
      return `You can withdraw at most ${usd(d.available)} right now.`;
    case "withdrawal_failed":
      return "The USDC transfer failed and your earnings were restored. Try again.";
    case "withdrawal_pending":
      return "The transfer was sent but isn't confirmed yet. It completes (or is reversed) automatically.";
    case "upstream_unreachable":
      return "svc couldn't reach your upstream at that URL. Check the base URL (it usually ends in /v1) and that the service is online.";
    case "upstream_auth_failed":
      return "Your upstream rejected that API key. Check the key and try again.";
    case "upstream_model_missing": {
      const missing = Array.isArray(d.missing_models) ? (d.missing_models as string[]).join(", ") : "some of the models";
      return `Your upstream doesn't serve ${missing}. Untick them or name the upstream's own model id.`;
    }
    case "upstream_url_forbidden":
      return "That upstream URL isn't allowed. Use a public https URL.";
    case "not_found":
      return "That item no longer exists. Refresh the page.";
    case "model_not_found":
      return "That model isn't on this market.";
    case "conflict":
    case "unprocessable":
    case "max_price_above_key_cap":
      return error.message;
    case "invalid_request":
    case "unknown_field":
      return `Check the form: ${error.message.replace(/^Invalid (request body|query): /, "")}`;
    default:
      if (error.status >= 500 || error.status === 0) {
        return `Something went wrong on svc's side. Try again in a moment${error.requestId ? ` (reference ${error.requestId})` : ""}.`;
      }
      return error.message;
  }
}

type WalletLikeError = { name?: string; code?: number; shortMessage?: string; message?: string; cause?: unknown };

function walletErrorChain(error: unknown): WalletLikeError[] {
  const chain: WalletLikeError[] = [];
  let current: unknown = error;
  while (current && typeof current === "object" && chain.length < 6) {
    chain.push(current as WalletLikeError);
    current = (current as WalletLikeError).cause;
  }
  return chain;
}

/**
 * Whether a failure after money-moving request was sent leaves its outcome unknown: no answer at all, svc's own
 * `payment_pending` / `withdrawal_pending`, or a 5xx that did not come from svc refusing before anything was recorded.
 * Only svc can then say what happened (by the authorization's nonce, or the withdrawal's Idempotency-Key).
 */
export function isOutcomeUnknown(error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  if (error.status === 0) return error.code === "network_error";
  return error.status >= 500 && error.code !== "service_unavailable";
}

/** Whether the person declined in their wallet (a choice, not a failure: nothing was signed). */
export function isUserRejection(error: unknown): boolean {
  return walletErrorChain(error).some(
    (e) => e.name === "UserRejectedRequestError" || e.code === 4001 || /user (rejected|denied|cancel)/i.test(e.message ?? ""),
  );
}

function describeWalletError(error: unknown): string {
  const chain = walletErrorChain(error);
  const has = (test: (e: WalletLikeError) => boolean) => chain.some(test);
  if (isUserRejection(error)) return "You cancelled the request in your wallet.";
  if (has((e) => e.name === "ConnectorChainMismatchError" || e.name === "ChainMismatchError")) {
    return "Your wallet is on another network. Switch to Base and try again.";
  }
  if (has((e) => e.name === "ProviderNotFoundError")) {
    return "No wallet found in this browser. On a computer, add a wallet extension (MetaMask, Rabby, Coinbase Wallet) and reload; on a phone, open this page in your wallet app's own browser, or pick WalletConnect, Base Account or Coinbase Wallet.";
  }
  if (has((e) => /@coinbase\/wallet-sdk|Cannot find module/i.test(e.message ?? ""))) {
    return "Coinbase Wallet's connector isn't available in this build. Use the Coinbase Wallet extension or another browser wallet.";
  }
  if (has((e) => e.name === "ConnectorNotConnectedError" || e.name === "ConnectorAccountNotFoundError")) {
    return "Connect your wallet first.";
  }
  if (has((e) => e.name === "ResourceUnavailableRpcError" || e.code === -32002)) {
    return "Your wallet already has a request open. Finish or dismiss it in the wallet, then try again.";
  }
  return "Your wallet couldn't complete the request. Try again.";
}
