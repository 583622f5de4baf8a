import "server-only";
import { metrics } from "@/lib/ops/metrics";
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { getAddress, type Address, type Hash } from "viem";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { getBalance } from "@/lib/ledger/accounts";
import { log } from "@/lib/log";
import { formatMicros } from "@/lib/money";
import { assertAmountInRange, configuredMicros } from "@/lib/payments/amount";
import { creditSettledPayment, markPaymentFailed } from "@/lib/payments/credit";
import { settlePayment, verifyPayment, type SettlementObserver } from "@/lib/payments/facilitator";
import { faults } from "@/lib/payments/faults";
import { describeChainError } from "@/lib/payments/relayer";
import type { PaymentFailureReason, TopUpView } from "@/lib/payments/schemas";
import {
  X402_NETWORK,
  X402_V1_NETWORK,
  assertPaymentMatches,
  buildPaymentRequired,
  buildRequirements,
  buildRequirementsV1,
  decodePayment,
  encodeSettlementHeader,
  facilitatorPayload,
  paymentInvalid,
  usdcAddress,
  treasuryAddress,
  type DecodedPayment,
} from "@/lib/payments/x402";

export type TopUpResult = {
  creditedMicros: bigint;
  /** The account's available balance after the credit. */
  balanceMicros: bigint;
  txHash: Hash;
  /** Headers for the 200: PAYMENT-RESPONSE (and X-PAYMENT-RESPONSE for v1 clients). */
  headers: Record<string, string>;
};

export function assertTopUpAmount(micros: bigint): bigint {
  return assertAmountInRange(micros, { minMicros: configuredMicros(env.TOPUP_MIN_USD), maxMicros: configuredMicros(env.TOPUP_MAX_USD) });
}

export function buildTopUpChallenge(amountMicros: bigint, walletAddress: string) {
  const payer = getAddress(walletAddress);
  return buildPaymentRequired(
    amountMicros,
    payer,
    `Sign an EIP-3009 USDC authorization from the signed-in wallet ${payer} and retry with PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1).`,
  );
}

/**
 * Takes an x402 payment for a top-up of exactly `amountMicros` from the signed-in wallet `payer` (an
 * authorization signed by any other wallet is refused): verifies it, records it `pending` under its unique
 * (asset, payer, nonce) before anything touches the chain, settles it with the relayer, and credits the
 * account in the transaction that marks it settled. Whatever happens after the row exists, reconciliation can
 * finish: a settled payment is credited once, an unsettleable one is marked failed.
 */
export async function topUpWithPayment(
  account: { accountId: string; walletAddress: string },
  amountMicros: bigint,
  header: string,
  now = new Date(),
): Promise<TopUpResult> {
  return takeTopUp(account, amountMicros, header, now).then(
    (result) => {
      metrics.topUps.inc({ outcome: "credited" });
      return result;
    },
    (error: unknown) => {
      metrics.topUps.inc({ outcome: error instanceof AppError ? error.code : "error" });
      throw error;
    },
  );
}

async function takeTopUp(
  account: { accountId: string; walletAddress: string },
  amountMicros: bigint,
  header: string,
  now: Date,
): Promise<TopUpResult> {
  const payer = getAddress(account.walletAddress);
  try {
    const payment = decodePayment(header);
    await assertAuthorizationUnused(payment);
    assertPaymentMatches(payment, amountMicros, payer, BigInt(Math.floor(now.getTime() / 1000)));
    const requirements =
      payment.version === 2
        ? buildRequirements(amountMicros, payer)
        : (buildRequirementsV1(amountMicros, payer) as unknown as PaymentRequirements);
    const payload = facilitatorPayload(payment, requirements);
    await verifyWithFacilitator(payment, payload, requirements);
    const paymentId = await recordPendingPayment(account.accountId, payment);
    return await settleAndCredit(account.accountId, paymentId, payment, payload, requirements);
  } catch (error) {
    throw withChallenge(error, amountMicros, payer);
  }
}

async function assertAuthorizationUnused(payment: DecodedPayment) {
  const existing = await db.payment.findUnique({
    where: {
      asset_payer_authorizationNonce: {
        asset: usdcAddress,
        payer: payment.authorization.from,
        authorizationNonce: payment.authorization.nonce,
      },
    },
    select: { id: true },
  });
  if (existing) throw alreadyUsed(payment);
}

function alreadyUsed(payment: DecodedPayment) {
  return new AppError(
    "authorization_already_used",
    `This payment authorization (nonce ${payment.authorization.nonce}) was already submitted; sign a new one to top up again.`,
  );
}

async function verifyWithFacilitator(payment: DecodedPayment, payload: PaymentPayload, requirements: PaymentRequirements) {
  let result;
  try {
    result = await verifyPayment(payload, requirements);
  } catch (error) {
    throw new AppError("service_unavailable", "The payment could not be verified on Base right now; nothing was charged. Retry shortly.", {
      cause: error,
    });
  }
  if (result.isValid) return;
  const reason = result.invalidReason ?? "verification_failed";
  if (reason === "invalid_exact_evm_nonce_already_used") throw alreadyUsed(payment);
  const known: Record<string, [PaymentFailureReason, string]> = {
    invalid_exact_evm_insufficient_balance: [
      "insufficient_funds",
      `The payer ${payment.authorization.from} holds less USDC than the authorization moves.`,
    ],
    invalid_exact_evm_signature: ["invalid_signature", "The authorization's signature does not verify for USDC on Base (chain 8453)."],
    invalid_exact_evm_payload_authorization_valid_before: ["authorization_expired", "The authorization has expired; sign a new one."],
    invalid_exact_evm_payload_authorization_valid_after: [
      "authorization_not_yet_valid",
      "The authorization's validAfter is in the future.",
    ],
    invalid_exact_evm_recipient_mismatch: ["recipient_mismatch", `The authorization must pay the treasury ${treasuryAddress}.`],
    invalid_exact_evm_network_mismatch: ["network_mismatch", `Pay on ${X402_NETWORK} (Base).`],
    eip6492_factory_not_allowed: [
      "undeployed_smart_wallet",
      "Signatures of not-yet-deployed smart wallets are not accepted; deploy the wallet first.",
    ],
  };
  const [code, message] = known[reason] ?? ["verification_failed", `The payment did not verify (${reason}).`];
  throw paymentInvalid(code, message);
}

/** The unique (asset, payer, nonce) row is the lock: of concurrent submissions of one authorization, one inserts it. */
async function recordPendingPayment(accountId: string, payment: DecodedPayment): Promise<string> {
  const a = payment.authorization;
  const rows = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO payments (account_id, x402_version, network, asset, payer, pay_to, amount_micros, authorization_nonce, valid_after, valid_before)
    VALUES (${accountId}::uuid, ${payment.version}, ${X402_NETWORK}, ${usdcAddress}, ${a.from}, ${a.to}, ${a.value}, ${a.nonce},
            ${a.validAfter}, ${a.validBefore})
    ON CONFLICT (asset, payer, authorization_nonce) DO NOTHING
    RETURNING id::text`;
  if (rows.length === 0) throw alreadyUsed(payment);
  return rows[0].id;
}

async function settleAndCredit(
  accountId: string,
  paymentId: string,
  payment: DecodedPayment,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<TopUpResult> {
  // v1 names the network ("base"); the SDK types only know CAIP-2 ids.
  const network = (payment.version === 2 ? X402_NETWORK : X402_V1_NETWORK) as SettleResponse["network"];
  let signedHash: Hash | undefined;
  const observer: SettlementObserver = {
    onSigned: async (hash) => {
      await db.payment.update({ where: { id: paymentId }, data: { txHash: hash } });
      signedHash = hash;
    },
  };

  let settlement: SettleResponse;
  try {
    await faults.topUpBeforeSettle?.(paymentId);
    settlement = await settlePayment(payload, requirements, observer);
  } catch (error) {
    if (signedHash) throw pending(paymentId, signedHash, error);
    await markPaymentFailed(paymentId, `settlement error: ${describeChainError(error)}`, null);
    throw new AppError("payment_settlement_failed", "The payment could not be settled; nothing was charged or credited.", { cause: error });
  }

  if (!settlement.success) {
    // Once broadcast, only a receipt says it failed. The v1 facilitator answers a failed receipt lookup (an RPC
    // error, a rate limit) as a failure without a transaction, and no send error: that outcome is unknown too.
    const broadcastWithoutVerdict = !observer.sendError && !settlement.transaction;
    const outcomeUnknown =
      settlement.errorReason === "settlement_pending" || observer.sendError?.broadcast === "unknown" || broadcastWithoutVerdict;
    if (outcomeUnknown && signedHash) throw pending(paymentId, signedHash, settlement.errorMessage);
    const reason = settlement.errorReason ?? "settlement_failed";
    await markPaymentFailed(
      paymentId,
      `${reason}${settlement.errorMessage ? `: ${settlement.errorMessage}` : ""}`,
      settlement.transaction || null,
    );
    throw new AppError(
      "payment_settlement_failed",
      `The USDC transfer did not go through (${reason}); nothing was credited. Sign a new authorization to retry.`,
      {
        details: { reason, transaction: settlement.transaction || null },
        headers: { "payment-response": encodeSettlementHeader({ ...settlement, network }) },
      },
    );
  }

  const txHash = settlement.transaction as Hash;
  try {
    await faults.topUpBeforeCredit?.(paymentId);
    await creditSettledPayment(paymentId, txHash);
  } catch (error) {
    throw pending(paymentId, txHash, error);
  }

  const paymentResponse = encodeSettlementHeader({ success: true, transaction: txHash, network, payer: payment.authorization.from });
  const balance = await getBalance("buyer", accountId);
  return {
    creditedMicros: payment.authorization.value,
    balanceMicros: balance.availableMicros,
    txHash,
    headers:
      payment.version === 2
        ? { "payment-response": paymentResponse }
        : { "payment-response": paymentResponse, "x-payment-response": paymentResponse },
  };
}

function pending(paymentId: string, txHash: Hash, cause: unknown) {
  log.error("top-up left pending for reconciliation", { paymentId, txHash, error: cause });
  return new AppError(
    "payment_pending",
    `The transfer ${txHash} was sent but could not be confirmed and credited yet. Do not sign again: it is credited automatically once confirmed on Base.`,
    { details: { transaction: txHash }, cause },
  );
}

/** Verification failures carry a fresh PAYMENT-REQUIRED, so x402 clients see the requirements and the reason. */
function withChallenge(error: unknown, amountMicros: bigint, payer: Address): unknown {
  if (!(error instanceof AppError) || error.code !== "payment_invalid") return error;
  const reason = String(error.details?.reason ?? "payment_invalid");
  return new AppError(error.code, error.message, {
    details: error.details,
    headers: { ...error.headers, "payment-required": buildPaymentRequired(amountMicros, payer, reason).header },
    cause: error.cause,
  });
}

export function formatTopUp(result: TopUpResult): TopUpView {
  return { credited: formatMicros(result.creditedMicros), balance: formatMicros(result.balanceMicros), transaction: result.txHash };
}
