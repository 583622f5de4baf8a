import "server-only";
import { getAddress } from "viem";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { formatMicros } from "@/lib/money";
import { AuthorizationNonce, type TopUpStatusView } from "@/lib/payments/schemas";
import { usdcAddress } from "@/lib/payments/x402";

/**
 * What happened to the signed top-up authorization with this nonce, for the account that sent it (another account's
 * nonce reads as not received, like an unknown one). A payment row exists from the moment svc records the
 * authorization, before anything touches the chain, so "not_received" is the truth at `checked_at`: svc never took
 * it. It can only still arrive before its valid_before (the chain refuses it afterwards), which the caller signed.
 */
export async function getTopUpStatus(
  account: { accountId: string; walletAddress: string },
  nonce: string,
  now = new Date(),
): Promise<TopUpStatusView> {
  if (!AuthorizationNonce.safeParse(nonce).success)
    throw new AppError("invalid_request", "The nonce must be 0x and 64 hex digits (the authorization's nonce).", {
      details: { param: "nonce" },
    });
  // Top-ups are taken only from the signed-in wallet, so its address and the nonce find the row by its unique key.
  const payment = await db.payment.findUnique({
    where: {
      asset_payer_authorizationNonce: {
        asset: usdcAddress,
        payer: getAddress(account.walletAddress),
        authorizationNonce: nonce.toLowerCase(),
      },
    },
    select: { accountId: true, status: true, amountMicros: true, txHash: true, failureReason: true, createdAt: true, settledAt: true },
  });
  const base = { nonce, checked_at: now.toISOString() };
  if (!payment || payment.accountId !== account.accountId)
    return { ...base, status: "not_received", amount: null, transaction: null, failure_reason: null, received_at: null, credited_at: null };
  return {
    ...base,
    status: payment.status === "settled" ? "credited" : payment.status,
    amount: formatMicros(payment.amountMicros),
    transaction: (payment.txHash as `0x${string}` | null) ?? null,
    failure_reason: payment.status === "failed" ? payment.failureReason : null,
    received_at: payment.createdAt.toISOString(),
    credited_at: payment.settledAt?.toISOString() ?? null,
  };
}
