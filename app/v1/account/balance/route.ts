import { getBuyerBalance } from "@/lib/account/profile";
import { BalanceSchema } from "@/lib/account/schemas";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/account/balance – the prepaid buying balance: available to spend, held by in-flight requests, and their total
export const GET = route(
  {
    auth: "key_or_session",
    docs: {
      operationId: "getBalance",
      tag: "Account",
      summary: "The prepaid balance",
      description:
        "The account's prepaid balance: available to spend, held by requests in flight, and their total (USDC). Any live API key of the account can read it (Authorization: Bearer, which wins when sent), so an agent can check before it calls or tops up; so can the account's session (the dashboard). A key's own spend limit and what is left of it are at GET /v1/key.",
      responses: [response(200, BalanceSchema, "Available to spend, held by in-flight requests, and their total.")],
    },
  },
  async ({ caller }) => ok(await getBuyerBalance(caller.accountId), { "cache-control": "no-store" }),
);
