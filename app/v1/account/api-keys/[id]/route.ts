import { revokeApiKey, updateApiKey } from "@/lib/auth/api-keys";
import { ApiKeySchema, UpdateApiKeyBody } from "@/lib/auth/schemas";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

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

// PATCH /v1/account/api-keys/{id} – change a key's name, max price, spend limit, its reset or its expiry
export const PATCH = route(
  {
    auth: "session",
    body: UpdateApiKeyBody,
    docs: {
      operationId: "updateApiKey",
      tag: "Account",
      summary: "Edit an API key",
      description:
        "Only the fields sent change; null clears a limit. A new `limit_reset` counts the new current period from the ledger (what the key's requests reserved since it began). A `spend_limit` below what the period has already spent is accepted: the key is refused (402 spend_limit_exceeded) until the next reset or a higher limit. Another account's key is a 404 like an unknown one; a revoked key cannot be edited (409).",
      pathParams: { id: "The key's id (UUID)." },
      requestExample: { spend_limit: "5.00", limit_reset: "weekly" },
      responses: [response(200, ApiKeySchema, "The key as edited.")],
      errors: ["not_found", "conflict", "invalid_amount", "amount_out_of_range"],
    },
  },
  async ({ session, params, body }) => ok(await updateApiKey(session.accountId, params.id, body)),
);
