import { createApiKey, CreateApiKeyBody, listApiKeys } from "@/lib/auth/api-keys";
import { created, ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

// POST /v1/account/api-keys – create a Bearer key; the secret is returned only here
export const POST = route({ auth: "session", body: CreateApiKeyBody }, async ({ session, body }) =>
  created(await createApiKey(session.accountId, body), { "cache-control": "no-store" }),
);

// GET /v1/account/api-keys – the account's keys with limits and usage, never their secrets
export const GET = route({ auth: "session" }, async ({ session }) => ok(await listApiKeys(session.accountId)));
