import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";
import { listDailyEarnings } from "@/lib/supply/earnings";
import { DailyEarningsListSchema, DailyEarningsQuery } from "@/lib/supply/schemas";

export const dynamic = "force-dynamic";

// GET /v1/supply/earnings/daily – earnings per UTC day and offer, for the supply dashboard's chart
export const GET = route(
  {
    auth: "session",
    query: DailyEarningsQuery,
    docs: {
      operationId: "listDailyEarnings",
      tag: "Supply",
      summary: "Earnings per UTC day and offer",
      description: "The last `days` UTC days (1 to 90, today included), from your earnings ledger: clears and probes.",
      responses: [response(200, DailyEarningsListSchema, "Days and offers with earnings, oldest first.")],
    },
  },
  async ({ query, session }) => ok(await listDailyEarnings(session.accountId, query.days)),
);
