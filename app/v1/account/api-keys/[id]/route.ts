import { revokeApiKey } from "@/lib/auth/api-keys";
import { ApiKeySchema } from "@/lib/auth/schemas";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/openapi/operation";

// DELETE /v1/account/api-keys/{id} – revoke one of the caller's keys; it is refused from the next request on
export const DELETE = route(
  {
    auth: "session",
    docs: {
      operationId: "revokeApiKey",
      tag: "Account",
      summary: "Revoke an API key",
      description: "Refused from the next request on. Idempotent; another account's key is a 404 like an unknown one.",
      pathParams: { id: "The key's id (UUID)." },
      responses: [response(200, ApiKeySchema, "The revoked key.")],
      errors: ["not_found"],
    },
  },
  async ({ session, params }) => ok(await revokeApiKey(session.accountId, params.id)),
);
