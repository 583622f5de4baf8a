/**
 * The x402 wire format of the top-up: what we ask for (PAYMENT-REQUIRED, and the v1 body) and how a payment
 * (PAYMENT-SIGNATURE for v2, X-PAYMENT for v1) is decoded and checked against exactly what was asked.
 */
import "server-only";
import type { PaymentFailureReason } from "@/lib/payments/schemas";
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements, PaymentRequirementsV1, SettleResponse } from "@x402/core/types";
import { getAddress, isAddressEqual, type Address, type Hex } from "viem";
import { z } from "zod";
import { USDC_EIP712_NAME, USDC_EIP712_VERSION } from "@/lib/chain/constants";
import { deployment, env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { formatMicros } from "@/lib/money";

/** CAIP-2 id of Base mainnet (the local chain runs as 8453 too). */
export const X402_NETWORK = "eip155:8453";
/** x402 v1 names networks instead. */
export const X402_V1_NETWORK = "base";
export const TOP_UP_PATH = "/v1/x402/top-up";
/** Settlement needs this much of an authorization's validity left when we receive it. */
export const MIN_VALIDITY_SECONDS = 15;
// Clients sign validBefore = now + maxTimeoutSeconds; this absorbs clock skew.
const VALIDITY_SKEW_SECONDS = 60;

export const usdcAddress: Address = getAddress(env.USDC_ADDRESS);
export const treasuryAddress: Address = getAddress(env.TREASURY_ADDRESS);

/**
 * `extra` carries the EIP-712 domain x402 clients sign with, and `payer`: the only wallet whose authorization
 * this top-up accepts (the signed-in one), so an authorization collected elsewhere cannot be cashed in here.
 */
function requirementsExtra(payer: Address) {
  return { name: USDC_EIP712_NAME, version: USDC_EIP712_VERSION, payer };
}

export function buildRequirements(amountMicros: bigint, payer: Address): PaymentRequirements {
  return {
    scheme: "exact",
    network: X402_NETWORK,
    asset: usdcAddress,
    amount: amountMicros.toString(),
    payTo: treasuryAddress,
    maxTimeoutSeconds: env.X402_MAX_TIMEOUT_SECONDS,
    extra: requirementsExtra(payer),
  };
}

export function buildRequirementsV1(amountMicros: bigint, payer: Address): PaymentRequirementsV1 {
  return {
    scheme: "exact",
    network: X402_V1_NETWORK as PaymentRequirementsV1["network"],
    maxAmountRequired: amountMicros.toString(),
    resource: `${deployment.origin}${TOP_UP_PATH}`,
    description: describeTopUp(amountMicros),
    mimeType: "application/json",
    outputSchema: {},
    payTo: treasuryAddress,
    maxTimeoutSeconds: env.X402_MAX_TIMEOUT_SECONDS,
    asset: usdcAddress,
    extra: requirementsExtra(payer),
  };
}

function describeTopUp(amountMicros: bigint) {
  return `Top up the svc balance by ${formatMicros(amountMicros)} USDC`;
}

/** The 402 challenge: the v2 `PAYMENT-REQUIRED` header value and the v1 body with `accepts`. */
export function buildPaymentRequired(amountMicros: bigint, payer: Address, error: string) {
  const paymentRequired: PaymentRequired = {
    x402Version: 2,
    error,
    resource: { url: `${deployment.origin}${TOP_UP_PATH}`, description: describeTopUp(amountMicros), mimeType: "application/json" },
    accepts: [buildRequirements(amountMicros, payer)],
  };
  return {
    header: encodePaymentRequiredHeader(paymentRequired),
    body: { x402Version: 1 as const, error, accepts: [buildRequirementsV1(amountMicros, payer)] },
  };
}

export function encodeSettlementHeader(response: SettleResponse): string {
  return encodePaymentResponseHeader(response);
}

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 20-byte hex address");
const uint = z.string().regex(/^\d{1,78}$/, "must be an unsigned integer string");

// Exactly the EIP-3009 shape and nothing else: x402's facilitator picks its settlement path from the fields it
// finds (a `permit2Authorization` makes it settle a Permit2 transfer instead), so no other field may pass.
const Eip3009Payload = z.strictObject({
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/, "must be hex"),
  authorization: z.strictObject({
    from: address,
    to: address,
    value: uint,
    validAfter: uint,
    validBefore: uint,
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "must be 32 bytes of hex"),
  }),
});

const PaymentV2 = z.looseObject({
  x402Version: z.literal(2),
  accepted: z.looseObject({ scheme: z.string(), network: z.string(), amount: z.string(), asset: z.string(), payTo: z.string() }),
  payload: z.unknown(),
});

const PaymentV1 = z.looseObject({ x402Version: z.literal(1), scheme: z.string(), network: z.string(), payload: z.unknown() });

export type Authorization = {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  /** Lower-case 0x-hex: the unique key of the payment together with asset and payer. */
  nonce: Hex;
};

export type DecodedPayment = {
  version: 1 | 2;
  /** What the client says it pays with: v2 echoes the requirements it accepted, v1 names scheme and network. */
  declared: { scheme: string; network: string; asset?: string; payTo?: string; amount?: string };
  signature: Hex;
  authorization: Authorization;
};

/** The payment header of a request, if any: v2 `PAYMENT-SIGNATURE` or v1 `X-PAYMENT`. */
export function readPaymentHeader(req: Request): string | null {
  return req.headers.get("payment-signature") ?? req.headers.get("x-payment");
}

/** Decodes a payment header; anything that is not an x402 EIP-3009 payment is a 400 or a 402 with a reason. */
export function decodePayment(header: string): DecodedPayment {
  let raw: unknown;
  try {
    raw = decodePaymentSignatureHeader(header.trim());
  } catch {
    throw new AppError("invalid_payment_header", "The payment header is not base64-encoded x402 JSON.");
  }
  const v2 = PaymentV2.safeParse(raw);
  const v1 = v2.success ? undefined : PaymentV1.safeParse(raw);
  if (!v2.success && !v1?.success) {
    throw new AppError("invalid_payment_header", "The payment header is not an x402 v1 or v2 payment payload.");
  }
  const inner = Eip3009Payload.safeParse(v2.success ? v2.data.payload : v1!.data!.payload);
  if (!inner.success) {
    throw paymentInvalid("unsupported_payload", "Only EIP-3009 transferWithAuthorization payloads (the `exact` EVM scheme) are accepted.");
  }
  const a = inner.data.authorization;
  return {
    version: v2.success ? 2 : 1,
    declared: v2.success ? v2.data.accepted : { scheme: v1!.data!.scheme, network: v1!.data!.network },
    signature: inner.data.signature as Hex,
    authorization: {
      from: getAddress(a.from),
      to: getAddress(a.to),
      value: BigInt(a.value),
      validAfter: BigInt(a.validAfter),
      validBefore: BigInt(a.validBefore),
      nonce: a.nonce.toLowerCase() as Hex,
    },
  };
}

/**
 * The payload the facilitator verifies and settles, rebuilt from the validated authorization and our own
 * requirements: never the header as received, so what is recorded (payer, nonce, amount) is what settles.
 */
export function facilitatorPayload(payment: DecodedPayment, requirements: PaymentRequirements): PaymentPayload {
  const a = payment.authorization;
  const payload = {
    signature: payment.signature,
    authorization: {
      from: a.from,
      to: a.to,
      value: a.value.toString(),
      validAfter: a.validAfter.toString(),
      validBefore: a.validBefore.toString(),
      nonce: a.nonce,
    },
  };
  if (payment.version === 2) return { x402Version: 2, accepted: requirements, payload };
  // v1 payloads name scheme and network instead of echoing the requirements; the SDK types only know v2.
  return { x402Version: 1, scheme: "exact", network: X402_V1_NETWORK, payload } as unknown as PaymentPayload;
}

/** Checks a decoded payment against exactly what we asked for, before the facilitator checks the signature. */
export function assertPaymentMatches(payment: DecodedPayment, amountMicros: bigint, payer: Address, nowSeconds: bigint) {
  const asked = formatMicros(amountMicros);
  if (payment.version === 2) {
    const accepted = payment.declared;
    if (accepted.scheme !== "exact") throw paymentInvalid("scheme_mismatch", `Pay with the "exact" scheme, not "${accepted.scheme}".`);
    if (accepted.network !== X402_NETWORK) {
      throw paymentInvalid("network_mismatch", `Pay on ${X402_NETWORK} (Base), not ${accepted.network}.`);
    }
    if (!sameAddress(accepted.asset ?? "", usdcAddress)) throw paymentInvalid("asset_mismatch", `Pay in USDC (${usdcAddress}).`);
    if (!sameAddress(accepted.payTo ?? "", treasuryAddress))
      throw paymentInvalid("recipient_mismatch", `Pay to the treasury ${treasuryAddress}.`);
    if (accepted.amount !== amountMicros.toString()) {
      throw paymentInvalid("amount_mismatch", `The payment accepts ${accepted.amount} micro-USDC but this top-up asks for ${asked} USDC.`);
    }
  } else {
    const { scheme, network } = payment.declared;
    if (scheme !== "exact") throw paymentInvalid("scheme_mismatch", `Pay with the "exact" scheme, not "${scheme}".`);
    if (network !== X402_V1_NETWORK) throw paymentInvalid("network_mismatch", `Pay on "${X402_V1_NETWORK}", not "${network}".`);
  }

  const a = payment.authorization;
  if (a.from !== payer) {
    throw paymentInvalid(
      "payer_mismatch",
      `The authorization is signed by ${a.from}, but top-ups are taken only from the signed-in wallet ${payer}.`,
    );
  }
  if (a.value !== amountMicros) {
    throw paymentInvalid(
      "amount_mismatch",
      `The authorization moves ${formatMicros(a.value)} USDC but this top-up asks for ${asked} USDC.`,
    );
  }
  if (a.to !== treasuryAddress)
    throw paymentInvalid("recipient_mismatch", `The authorization pays ${a.to}, not the treasury ${treasuryAddress}.`);
  if (a.validAfter > nowSeconds) throw paymentInvalid("authorization_not_yet_valid", "The authorization's validAfter is in the future.");
  if (a.validBefore < nowSeconds + BigInt(MIN_VALIDITY_SECONDS)) {
    throw paymentInvalid(
      "authorization_expired",
      `The authorization expires in less than ${MIN_VALIDITY_SECONDS} seconds; sign a new one.`,
    );
  }
  if (a.validBefore > nowSeconds + BigInt(env.X402_MAX_TIMEOUT_SECONDS + VALIDITY_SKEW_SECONDS)) {
    throw paymentInvalid(
      "authorization_validity_too_long",
      `The authorization must expire within ${env.X402_MAX_TIMEOUT_SECONDS} seconds (the requirement's maxTimeoutSeconds).`,
    );
  }
}

/** A verification failure; `reason` is machine-readable and also goes into PAYMENT-REQUIRED's `error`. */
export function paymentInvalid(reason: PaymentFailureReason, message: string): AppError {
  return new AppError("payment_invalid", message, { details: { reason } });
}

function sameAddress(a: string, b: Address) {
  return /^0x[0-9a-fA-F]{40}$/.test(a) && isAddressEqual(a as Address, b);
}
