import { createApiKey, listApiKeys } from "@/lib/auth/api-keys";
import { ApiKeyListSchema, CreateApiKeyBody, CreatedApiKeySchema } from "@/lib/auth/schemas";
import { created, ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// POST /v1/account/api-keys – create a Bearer key; the secret is returned only here
export const POST = route(
  {
    auth: "session",
    body: CreateApiKeyBody,
    docs: {
      operationId: "createApiKey",
      tag: "Account",
      summary: "Create an API key",
      description:
        "A Bearer key for POST /v1/chat/completions, with an optional max price cap and spend limit. The secret is returned only here.",
      requestExample: { name: "my-agent", max_price_cents: 90, spend_limit: "2.00", limit_reset: "daily" },
      responses: [response(201, CreatedApiKeySchema, "The key, with its secret `key` (shown once).")],
      errors: ["invalid_amount", "amount_out_of_range"],
    },
  },
  async ({ session, body }) => created(await createApiKey(session.accountId, body), { "cache-control": "no-store" }),
);

// GET /v1/account/api-keys – the account's keys with limits and usage, never their secrets
export const GET = route(
  {
    auth: "session",
    docs: {
      operationId: "listApiKeys",
      tag: "Account",
      summary: "List API keys",
      description: "Newest first, revoked ones included; never a secret.",
      responses: [response(200, ApiKeyListSchema, "The account's keys.")],
    },
  },
  async ({ session }) => ok(await listApiKeys(session.accountId)),
);
