import { assertSameSiteRequest, readSessionCookie, serializeSessionCookie } from "@/lib/auth/request-credentials";
import { signInWithEthereum, VerifyBody } from "@/lib/auth/siwe";
import { deployment } from "@/lib/env";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";

// POST /auth/verify – check a signed SIWE message and open a session; its token travels only in the cookie
export const POST = route({ auth: "public", body: VerifyBody, rateLimit: true }, async ({ req, body }) => {
  assertSameSiteRequest(req);
  const { address, token, expiresAt } = await signInWithEthereum(body, {
    userAgent: req.headers.get("user-agent"),
    previousSessionToken: readSessionCookie(req),
  });
  return ok(
    { address, expiresAt: expiresAt.toISOString() },
    { "set-cookie": serializeSessionCookie(token, expiresAt, { secure: deployment.secure }), "cache-control": "no-store" },
  );
});
