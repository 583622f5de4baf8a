import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";
import { getGeneration } from "@/lib/router/get-generation";
import { GenerationSchema } from "@/lib/router/schemas";

export const dynamic = "force-dynamic";

// GET /v1/generations/{id} – one completion of the caller's account: who served it, what was billed, what it cost
export const GET = route(
  {
    auth: "key_or_session",
    docs: {
      operationId: "getGeneration",
      tag: "Inference",
      summary: "Look up a generation",
      description:
        "The record of one completion, by the id its answer carried (the body's `id`, also `X-Svc-Generation-Id`): shown under the id the buyer was given (resp_… for a POST /v1/responses answer, with the completion's chatcmpl-… beside it): model, the offer and the supplier's public id and display name that served it, the tokens billed beside the upstream's claim and svc's own count (reasoning tokens too: claimed, billed, and the bound svc accepts) and whether they were disputed, burn, price, charge, supplier share and platform fee (exactly its journal entry's lines), finish_reason, the upstream's and the total latency, the API key that made it and the journal entry id. Any live API key of the same account can read it (Authorization: Bearer, which wins when sent), and so can the account's session (the dashboard). Another account's id is a 404, exactly like an unknown one; a malformed id is a 400.",
      pathParams: { id: "The completion's id (chatcmpl- and its letters and digits), or the id of the response it answered (resp_…)." },
      responses: [response(200, GenerationSchema, "The generation.")],
      errors: ["invalid_request", "not_found"],
    },
  },
  async ({ caller, params }) => ok(await getGeneration(caller.accountId, params.id)),
);
