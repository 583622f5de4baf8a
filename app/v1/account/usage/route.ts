import { UsagePageSchema } from "@/lib/account/schemas";
import { listUsage } from "@/lib/account/usage";
import { PageQuery } from "@/lib/pagination";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/account/usage – this account's completions, newest first: key, model, tokens, burn, price, cost
export const GET = route(
  {
    auth: "session",
    query: PageQuery,
    docs: {
      operationId: "listUsage",
      tag: "Account",
      summary: "The account's completions",
      description: "Newest first: key, model, tokens, burn, price and cost of each completion.",
      responses: [response(200, UsagePageSchema, "One page of completions.")],
    },
  },
  async ({ query, session }) => ok(await listUsage(session.accountId, query)),
);
