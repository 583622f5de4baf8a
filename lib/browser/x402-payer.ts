import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { getAddress, isAddressEqual, type Address, type Hex } from "viem";
import { ApiError, apiFetch } from "@/lib/browser/api";
import type { TopUpView } from "@/lib/payments/schemas";

export type TopUpStep = "requesting" | "signing" | "settling";

/** The signed authorization about to be sent: from here on only svc can say whether it moved money. */
export type SentAuthorization = { nonce: Hex; validBefore: number };

/** What the wallet must sign: an EIP-712 payload (wagmi's signTypedData takes it as is). */
export type TypedDataSigner = {
  address: Address;
  signTypedData: (typedData: {
    domain: Record<string, unknown>;
    types: Record<string, unknown>;
    primaryType: string;
    message: Record<string, unknown>;
  }) => Promise<Hex>;
};

const TOP_UP_PATH = "/v1/x402/top-up";
const NETWORK = "eip155:8453";

/**
 * An x402 v2 top-up from the browser: POST asks for a 402 carrying PAYMENT-REQUIRED; the wallet signs the
 * EIP-3009 TransferWithAuthorization it describes (USD Coin / 2 / 8453 / USDC); the retry carries
 * PAYMENT-SIGNATURE and answers once the transfer has settled on Base and the balance is credited.
 */
export async function topUpWithX402(
  amount: string,
  expected: { amountMicros: bigint; usdcAddress: Address },
  signer: TypedDataSigner,
  onStep: (step: TopUpStep) => void,
  signal?: AbortSignal,
  onSent?: (sent: SentAuthorization) => void,
): Promise<TopUpView> {
  onStep("requesting");
  const challenge = await apiFetch(TOP_UP_PATH, { method: "POST", body: { amount }, signal }, [402]);
  const header = challenge.status === 402 ? challenge.headers.get("payment-required") : null;
  if (!header) throw new ApiError(challenge.status, "internal_error", "The top-up did not answer with an x402 payment request.");
  const paymentRequired = decodePaymentRequiredHeader(header);
  const requirements = paymentRequired.accepts.find((r: PaymentRequirements) => r.scheme === "exact" && r.network === NETWORK);
  // Sign only what was asked for: exactly this amount, in USDC on Base.
  if (
    !requirements ||
    BigInt(requirements.amount) !== expected.amountMicros ||
    !isAddressEqual(getAddress(requirements.asset), expected.usdcAddress)
  ) {
    throw new ApiError(502, "internal_error", "The payment request did not match the top-up; nothing was signed.");
  }
  // The service takes top-ups only from the signed-in wallet: say so before asking a switched wallet to sign.
  const payer = (requirements.extra as { payer?: string } | undefined)?.payer;
  if (payer && !isAddressEqual(getAddress(payer), signer.address)) {
    // Its own code: the specific sentence is shown as written (lib/browser/errors.ts), never a generic one.
    throw new ApiError(
      0,
      "wallet_account_changed",
      `Top-ups are paid from the signed-in wallet ${payer}; switch your wallet back to it (it is on ${signer.address}). Nothing was signed.`,
    );
  }

  // Cancelled (or the page went offline and the user gave up) before the wallet was asked: nothing to sign.
  signal?.throwIfAborted();
  onStep("signing");
  const { payload } = await new ExactEvmScheme(signer).createPaymentPayload(2, requirements);
  const payment: PaymentPayload = { x402Version: 2, resource: paymentRequired.resource, accepted: requirements, payload };

  // Cancelled while the wallet was open: the signed authorization is never sent, so nothing is charged.
  signal?.throwIfAborted();
  const { nonce, validBefore } = (payload as { authorization: { nonce: Hex; validBefore: string } }).authorization;
  onSent?.({ nonce, validBefore: Number(validBefore) });
  onStep("settling");
  const paid = await apiFetch(TOP_UP_PATH, {
    method: "POST",
    body: { amount },
    headers: { "payment-signature": encodePaymentSignatureHeader(payment) },
  });
  return (await paid.json()) as TopUpView;
}
