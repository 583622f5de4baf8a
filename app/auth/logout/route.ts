import { serializeClearedSessionCookie } from "@/lib/auth/request-credentials";
import { revokeSession } from "@/lib/auth/sessions";
import { deployment } from "@/lib/env";
import { noContent } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

// POST /auth/logout – revoke this session server-side and clear the cookie
export const POST = route(
  {
    auth: "session",
    docs: {
      operationId: "logout",
      tag: "Auth",
      summary: "Sign out",
      description: "Revokes the session server-side (the cookie stops working wherever it was copied to) and clears the cookie.",
      responses: [response(204, null, "Signed out.", ["SetCookie"])],
    },
  },
  async ({ session }) => {
    await revokeSession(session.sessionId);
    return noContent({ "set-cookie": serializeClearedSessionCookie({ secure: deployment.secure }) });
  },
);
