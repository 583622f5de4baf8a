import { z } from "zod";
import { created, ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { listWithdrawals, parseWithdrawalAmount, requestWithdrawal } from "@/lib/payments/withdrawals";

export const dynamic = "force-dynamic";

const WithdrawalBody = z.strictObject({ amount: z.string().describe('USD decimal string, e.g. "25.00"') });

// GET /v1/supply/withdrawals – this supplier's withdrawals, newest first
export const GET = route({ auth: "session" }, async ({ session }) => ok({ data: await listWithdrawals(session.accountId) }));

// POST /v1/supply/withdrawals – send earnings as USDC to the signed-in wallet (never to an address from the body)
export const POST = route({ auth: "session", body: WithdrawalBody }, async ({ body, session }) =>
  created(await requestWithdrawal(session.accountId, session.walletAddress, parseWithdrawalAmount(body.amount))),
);
