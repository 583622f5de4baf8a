import { z } from "zod";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { listDailySpend } from "@/lib/account/usage";

export const dynamic = "force-dynamic";

const DailyQuery = z.strictObject({ days: z.coerce.number().int().min(1).max(365).default(30) });

// GET /v1/account/usage/daily – spend per UTC day, for the dashboard's chart
export const GET = route({ auth: "session", query: DailyQuery }, async ({ query, session }) =>
  ok({ data: await listDailySpend(session.accountId, query.days) }),
);
