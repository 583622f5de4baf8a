import { created, ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";
import { AppError } from "@/lib/errors";
import { IdempotencyKey, WithdrawalBody, WithdrawalListQuery, WithdrawalListSchema, WithdrawalSchema } from "@/lib/payments/schemas";
import { listWithdrawals, assertWithdrawalAmount, requestWithdrawal } from "@/lib/payments/withdrawals";

export const dynamic = "force-dynamic";

// GET /v1/supply/withdrawals – this supplier's withdrawals, newest first (or the one requested with an Idempotency-Key)
export const GET = route(
  {
    auth: "session",
    query: WithdrawalListQuery,
    docs: {
      operationId: "listWithdrawals",
      tag: "Supply",
      summary: "List your withdrawals",
      description:
        "Newest first. With `idempotency_key`: only the withdrawal requested with that Idempotency-Key, so a client whose answer was lost learns what happened (an empty list: svc never received that request).",
      responses: [response(200, WithdrawalListSchema, "Newest first.")],
    },
  },
  async ({ query, session }) => ok(await listWithdrawals(session.accountId, { idempotencyKey: query.idempotency_key })),
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
      description:
        "Sent on chain to the signed-in wallet (never to an address from the body). With an Idempotency-Key, a request sent again answers the withdrawal the first one made (as it stands now) instead of making another; the same key for another amount is a 400.",
      requestHeaders: ["IdempotencyKeyHeader"],
      requestExample: { amount: "12.50" },
      responses: [response(201, WithdrawalSchema, "Sent.")],
      errors: ["invalid_amount", "amount_out_of_range", "insufficient_earnings", "withdrawal_failed", "withdrawal_pending"],
    },
  },
  async ({ req, body, session }) =>
    created(
      await requestWithdrawal(session.accountId, session.walletAddress, assertWithdrawalAmount(body.amount), readIdempotencyKey(req)),
    ),
);

function readIdempotencyKey(req: Request): string | null {
  const key = req.headers.get("idempotency-key");
  if (key === null) return null;
  if (!IdempotencyKey.safeParse(key).success)
    throw new AppError("invalid_request", "Idempotency-Key: must be 1-100 of A-Z a-z 0-9 . _ : -.", {
      details: { param: "idempotency-key" },
    });
  return key;
}
