import { listRefusals } from "@/lib/account/refusals";
import { RefusalListSchema, RefusalsQuery } from "@/lib/account/schemas";
import { AppError } from "@/lib/errors";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/account/usage/refusals – requests the account's keys were refused (402, 429, 503), per key by reason, and the latest
export const GET = route(
  {
    auth: "key_or_session",
    query: RefusalsQuery,
    docs: {
      operationId: "listRefusals",
      tag: "Account",
      summary: "Requests the account's keys were refused",
      description:
        "Why an agent stopped: each key's 402, 429 and 503 answers over the last `hours`, counted by reason with the latest message, and the latest minutes that had any (kept 7 days). A session reads every key's; an API key its own only (another `key_id` is a 404).",
      responses: [response(200, RefusalListSchema, "Refusals per key by reason, and the latest.")],
      errors: ["not_found"],
    },
  },
  async ({ caller, query }) => {
    if (caller.apiKeyId && query.key_id && query.key_id !== caller.apiKeyId) {
      throw new AppError("not_found", "An API key reads its own refusals only: leave out key_id, or sign in to read every key's.");
    }
    return ok(await listRefusals(caller.accountId, { ...query, apiKeyId: caller.apiKeyId ?? query.key_id }), {
      "cache-control": "no-store",
    });
  },
);
