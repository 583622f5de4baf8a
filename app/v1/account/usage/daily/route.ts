import { DailyQuery, DailySpendListSchema } from "@/lib/account/schemas";
import { listDailySpend } from "@/lib/account/usage";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/account/usage/daily – spend per UTC day, for the dashboard's chart
export const GET = route(
  {
    auth: "session",
    query: DailyQuery,
    docs: {
      operationId: "listDailySpend",
      tag: "Account",
      summary: "Spend per UTC day",
      responses: [response(200, DailySpendListSchema, "Days with use, oldest first.")],
    },
  },
  async ({ query, session }) => ok(await listDailySpend(session.accountId, query.days)),
);
