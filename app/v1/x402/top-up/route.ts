import { json, ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";
import { PaymentChallengeSchema, TopUpBody, TopUpSchema } from "@/lib/payments/schemas";
import { buildTopUpChallenge, formatTopUp, assertTopUpAmount, topUpWithPayment } from "@/lib/payments/top-up";
import { readPaymentHeader } from "@/lib/payments/x402";

export const dynamic = "force-dynamic";

// POST /v1/x402/top-up – fund the balance with USDC from the signed-in wallet over x402: a 402 asks for exactly `amount`, the paid retry credits it
export const POST = route(
  {
    auth: "session",
    body: TopUpBody,
    rateLimit: true,
    docs: {
      operationId: "topUp",
      tag: "Payments",
      summary: "Fund the balance with USDC over x402",
      description:
        "Without a payment header: 402 asking for exactly `amount` in USDC on Base, payable to the treasury, from the signed-in wallet (`extra.payer`; an authorization from any other wallet is refused). Sign an EIP-3009 transferWithAuthorization for it with that wallet and retry the same request with PAYMENT-SIGNATURE (v2) or X-PAYMENT (v1): the payment is verified, settled on chain, and credited once.",
      requestHeaders: ["PaymentSignatureHeader", "XPaymentHeader"],
      requestExample: { amount: "10.00" },
      responses: [
        response(200, TopUpSchema, "Paid and credited.", ["PaymentResponse"]),
        response(402, PaymentChallengeSchema, "Payment required for exactly this amount.", ["PaymentRequired"]),
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
  },
  async ({ req, body, session }) => {
    const amountMicros = assertTopUpAmount(body.amount);
    const payment = readPaymentHeader(req);
    if (!payment) {
      const challenge = buildTopUpChallenge(amountMicros, session.walletAddress);
      return json(challenge.body, { status: 402, headers: { "payment-required": challenge.header, "cache-control": "no-store" } });
    }
    const result = await topUpWithPayment(session, amountMicros, payment);
    return ok(formatTopUp(result), { ...result.headers, "cache-control": "no-store" });
  },
);
