import { serializeClearedSessionCookie } from "@/lib/auth/request-credentials";
import { revokeSession } from "@/lib/auth/sessions";
import { deployment } from "@/lib/env";
import { noContent } from "@/lib/http/responses";
import { route } from "@/lib/http/route";

// POST /auth/logout – revoke this session server-side and clear the cookie
export const POST = route({ auth: "session" }, async ({ session }) => {
  await revokeSession(session.sessionId);
  return noContent({ "set-cookie": serializeClearedSessionCookie({ secure: deployment.secure }) });
});
