import { created, ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";
import { WithdrawalBody, WithdrawalListSchema, WithdrawalSchema } from "@/lib/payments/schemas";
import { listWithdrawals, assertWithdrawalAmount, requestWithdrawal } from "@/lib/payments/withdrawals";

export const dynamic = "force-dynamic";

// GET /v1/supply/withdrawals – this supplier's withdrawals, newest first
export const GET = route(
  {
    auth: "session",
    docs: {
      operationId: "listWithdrawals",
      tag: "Supply",
      summary: "List your withdrawals",
      responses: [response(200, WithdrawalListSchema, "Newest first.")],
    },
  },
  async ({ session }) => ok(await listWithdrawals(session.accountId)),
);

// POST /v1/supply/withdrawals – send earnings as USDC to the signed-in wallet (never to an address from the body)
export const POST = route(
  {
    auth: "session",
    body: WithdrawalBody,
    docs: {
      operationId: "createWithdrawal",
      tag: "Supply",
      summary: "Withdraw earnings as USDC",
      description: "Sent on chain to the signed-in wallet (never to an address from the body).",
      requestExample: { amount: "12.50" },
      responses: [response(201, WithdrawalSchema, "Sent.")],
      errors: ["invalid_amount", "amount_out_of_range", "insufficient_earnings", "withdrawal_failed", "withdrawal_pending"],
    },
  },
  async ({ body, session }) =>
    created(await requestWithdrawal(session.accountId, session.walletAddress, assertWithdrawalAmount(body.amount))),
);
