import { getBuyerBalance } from "@/lib/account/profile";
import { BalanceSchema } from "@/lib/account/schemas";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/account/balance – the prepaid buying balance: available to spend, held by in-flight requests, and their total
export const GET = route(
  {
    auth: "session",
    docs: {
      operationId: "getBalance",
      tag: "Account",
      summary: "The prepaid balance",
      responses: [response(200, BalanceSchema, "Available to spend, held by in-flight requests, and their total.")],
    },
  },
  async ({ session }) => ok(await getBuyerBalance(session.accountId)),
);
