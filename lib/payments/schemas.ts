/** Money in and out on the wire: x402 top-ups and supplier withdrawals. */
import { z } from "zod";
import { Address, component, listOf, Timestamp, TxHash, Usdc, UsdAmount } from "@/lib/wire";

export const TopUpBody = z.strictObject({ amount: UsdAmount });

/** Why a top-up's x402 payment was refused: `error.reason` of a 402 `payment_invalid` (the dashboard words each). */
export const PAYMENT_FAILURE_REASONS = [
  "unsupported_payload",
  "scheme_mismatch",
  "network_mismatch",
  "asset_mismatch",
  "recipient_mismatch",
  "amount_mismatch",
  "authorization_expired",
  "authorization_not_yet_valid",
  "authorization_validity_too_long",
  "payer_mismatch",
  "insufficient_funds",
  "invalid_signature",
  "undeployed_smart_wallet",
  "verification_failed",
] as const;
export type PaymentFailureReason = (typeof PAYMENT_FAILURE_REASONS)[number];
export const WithdrawalBody = z.strictObject({ amount: UsdAmount });

export const TopUpSchema = component(
  "TopUp",
  z.object({ credited: Usdc, balance: Usdc.describe("Available balance after the credit"), transaction: TxHash }),
);
export type TopUpView = z.output<typeof TopUpSchema>;

/** x402's own wire format (camelCase by that protocol, not ours). */
export const PaymentChallengeSchema = component(
  "PaymentChallenge",
  z
    .object({
      x402Version: z.literal(1),
      error: z.string(),
      accepts: z.array(
        z.looseObject({
          scheme: z.literal("exact"),
          network: z.string(),
          maxAmountRequired: z.string().describe("Micro-USDC"),
          payTo: Address,
          asset: Address,
          maxTimeoutSeconds: z.number().int(),
          extra: z.looseObject({
            name: z.string().describe("EIP-712 domain name of the asset"),
            version: z.string().describe("EIP-712 domain version of the asset"),
            payer: Address.describe("The signed-in wallet: the authorization's `from` must be this address"),
          }),
        }),
      ),
    })
    .describe(
      "x402 v1 body of the 402; v2 clients read the base64 PAYMENT-REQUIRED header instead. Sign an EIP-3009 USDC authorization for exactly the amount and retry with PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1).",
    ),
);

export const WithdrawalSchema = component(
  "Withdrawal",
  z.object({
    id: z.string(),
    amount: Usdc,
    to_address: Address,
    status: z.enum(["pending", "sent", "failed"]),
    transaction: z.string().nullable(),
    failure_reason: z.string().nullable(),
    idempotency_key: z.string().nullable().describe("The Idempotency-Key it was requested with, if any"),
    created_at: Timestamp,
    completed_at: Timestamp.nullable(),
  }),
);
export type WithdrawalView = z.output<typeof WithdrawalSchema>;

export const IdempotencyKey = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,100}$/, "must be 1-100 of A-Z a-z 0-9 . _ : -")
  .describe("A client's Idempotency-Key");

export const WithdrawalListQuery = z.strictObject({
  idempotency_key: IdempotencyKey.optional().describe("Only the withdrawal requested with this Idempotency-Key (none: an empty list)"),
});

export const WithdrawalListSchema = component("WithdrawalList", listOf(WithdrawalSchema));
export type WithdrawalList = z.output<typeof WithdrawalListSchema>;

/** An EIP-3009 authorization nonce: 32 bytes as 0x and 64 hex digits. */
export const AuthorizationNonce = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/)
  .describe("The EIP-3009 authorization's nonce (0x and 64 hex digits)");

/**
 * What svc did with one signed top-up authorization, asked by its nonce: the dashboard's answer after the connection
 * dropped with the signed payment in flight, instead of a guess from the network error.
 */
export const TopUpStatusSchema = component(
  "TopUpStatus",
  z.object({
    nonce: AuthorizationNonce,
    status: z
      .enum(["credited", "pending", "failed", "not_received"])
      .describe(
        "credited: settled on Base and added to the balance. pending: received, the transfer's outcome not known yet (do not sign again; it is credited once confirmed). failed: nothing was charged or credited. not_received: svc has no record of this authorization; it can still arrive until its valid_before, after which it can never move money (compare with checked_at).",
      ),
    amount: Usdc.nullable().describe("The authorization's amount; null when not received"),
    transaction: TxHash.nullable(),
    failure_reason: z.string().nullable(),
    received_at: Timestamp.nullable(),
    credited_at: Timestamp.nullable(),
    checked_at: Timestamp.describe("svc's clock when it answered"),
  }),
);
export type TopUpStatusView = z.output<typeof TopUpStatusSchema>;
