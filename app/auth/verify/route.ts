import { assertSameSiteRequest, readSessionCookie, serializeSessionCookie } from "@/lib/auth/request-credentials";
import { SessionSchema, VerifyBody } from "@/lib/auth/schemas";
import { describeSession } from "@/lib/auth/sessions";
import { signInWithEthereum } from "@/lib/auth/siwe";
import { deployment } from "@/lib/env";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

// POST /auth/verify – check a signed SIWE message and open a session; its token travels only in the cookie
export const POST = route(
  {
    auth: "public",
    body: VerifyBody,
    rateLimit: true,
    docs: {
      operationId: "verifySignIn",
      tag: "Auth",
      summary: "Sign in with a signed SIWE message",
      description:
        "Checks the message (domain = this host, uri on this origin, chainId 8453, our unused nonce, time window) and the signature (EOA, EIP-1271, EIP-6492), then opens a session: the token travels only in the HttpOnly svc_session cookie.",
      requestExample: { message: "svc.example wants you to sign in with your Ethereum account:\n0x…\n\n…\nNonce: …", signature: "0x…" },
      responses: [response(200, SessionSchema, "Signed in; the svc_session cookie is set.", ["SetCookie"])],
      errors: [
        "cross_site_request",
        "invalid_siwe_message",
        "malformed_signature",
        "siwe_domain_mismatch",
        "siwe_uri_mismatch",
        "siwe_wrong_chain",
        "siwe_nonce_invalid",
        "siwe_expired",
        "siwe_not_yet_valid",
        "siwe_issued_at_invalid",
        "invalid_signature",
      ],
    },
  },
  async ({ req, body }) => {
    assertSameSiteRequest(req);
    const { address, token, expiresAt } = await signInWithEthereum(body, {
      userAgent: req.headers.get("user-agent"),
      previousSessionToken: readSessionCookie(req),
    });
    return ok(describeSession({ walletAddress: address, expiresAt }), {
      "set-cookie": serializeSessionCookie(token, expiresAt, { secure: deployment.secure }),
      "cache-control": "no-store",
    });
  },
);
