import { revokeApiKey } from "@/lib/auth/api-keys";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";

// DELETE /v1/account/api-keys/{id} – revoke one of the caller's keys; it is refused from the next request on
export const DELETE = route({ auth: "session" }, async ({ session, params }) =>
  ok(await revokeApiKey(session.accountId, params.id)),
);
