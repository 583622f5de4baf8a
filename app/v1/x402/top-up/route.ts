import { z } from "zod";
import { json, ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { buildTopUpChallenge, formatTopUp, parseTopUpAmount, topUpWithPayment } from "@/lib/payments/top-up";
import { readPaymentHeader } from "@/lib/payments/x402";

export const dynamic = "force-dynamic";

const TopUpBody = z.strictObject({ amount: z.string().describe('USD decimal string, e.g. "10.00"') });

// POST /v1/x402/top-up – fund the balance with USDC from the signed-in wallet over x402: a 402 asks for exactly `amount`, the paid retry credits it
export const POST = route({ auth: "session", body: TopUpBody, rateLimit: true }, async ({ req, body, session }) => {
  const amountMicros = parseTopUpAmount(body.amount);
  const payment = readPaymentHeader(req);
  if (!payment) {
    const challenge = buildTopUpChallenge(amountMicros, session.walletAddress);
    return json(challenge.body, { status: 402, headers: { "payment-required": challenge.header, "cache-control": "no-store" } });
  }
  const result = await topUpWithPayment(session, amountMicros, payment);
  return ok(formatTopUp(result), { ...result.headers, "cache-control": "no-store" });
});
