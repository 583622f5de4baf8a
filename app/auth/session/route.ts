import { SessionSchema } from "@/lib/auth/schemas";
import { describeSession } from "@/lib/auth/sessions";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /auth/session – who is signed in (wallet) and until when
export const GET = route(
  {
    auth: "session",
    docs: {
      operationId: "getSession",
      tag: "Auth",
      summary: "Who is signed in",
      responses: [response(200, SessionSchema, "The session's wallet and expiry.")],
    },
  },
  ({ session }) => ok(describeSession(session), { "cache-control": "no-store" }),
);
