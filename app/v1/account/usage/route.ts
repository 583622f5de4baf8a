import { UsagePageSchema } from "@/lib/account/schemas";
import { listUsage, UsageQuery } from "@/lib/account/usage";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/account/usage – this account's completions, newest first: key, model, tokens, burn, price, cost; ?id= finds one
export const GET = route(
  {
    auth: "session",
    query: UsageQuery,
    docs: {
      operationId: "listUsage",
      tag: "Account",
      summary: "The account's completions",
      description:
        "Newest first: key, model, tokens, burn, price and cost of each completion, under the id its answer carried (chatcmpl-…, or resp_… from POST /v1/responses). `id` finds one by either id.",
      responses: [response(200, UsagePageSchema, "One page of completions.")],
    },
  },
  async ({ query, session }) => ok(await listUsage(session.accountId, query)),
);
