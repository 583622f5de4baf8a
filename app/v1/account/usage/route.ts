import { PageQuery } from "@/lib/http/pagination";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { listUsage } from "@/lib/account/usage";

export const dynamic = "force-dynamic";

// GET /v1/account/usage – this account's completions, newest first: key, model, tokens, burn, price, cost
export const GET = route({ auth: "session", query: PageQuery }, async ({ query, session }) =>
  ok(await listUsage(session.accountId, query)),
);
