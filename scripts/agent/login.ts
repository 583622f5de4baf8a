/** login: GET /auth/nonce → EIP-4361 message (viem/siwe) → sign → POST /auth/verify → keep the svc_session cookie. */
import type { SessionView } from "../../lib/auth/schemas";
import { buildSiweMessage, type SiweChallenge } from "../../lib/auth/siwe-message";
import { BASE_CHAIN_ID } from "../../lib/chain/constants";
import { apiFailure, send, type Context } from "./api";
import { isLoopbackHost, resolveSigner } from "./config";
import { CliError, EXIT } from "./errors";

type Challenge = SiweChallenge;

export type LoginResult = { address: string; expires_at: string; base_url: string; session_file: string };

export async function login(ctx: Context, note: (text: string) => void): Promise<LoginResult> {
  const signer = resolveSigner(ctx.config, ctx.env);
  note(`Signing in to ${ctx.config.baseUrl} as ${signer.account.address} (key from ${signer.source}).`);

  const nonceRes = await send(ctx, `/auth/nonce?walletAddress=${signer.account.address}`, { headers: { accept: "application/json" } });
  if (!nonceRes.ok) throw await apiFailure(ctx, nonceRes);
  const challenge = (await nonceRes.json()) as Challenge;
  assertChallengeIsForThisServer(ctx, challenge);

  const message = buildSiweMessage(challenge, signer.account.address);
  const signature = await signer.account.signMessage({ message });

  const verifyRes = await send(ctx, "/auth/verify", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ message, signature }),
  });
  if (!verifyRes.ok) throw await apiFailure(ctx, verifyRes);
  const session = (await verifyRes.json()) as SessionView;
  const cookie = verifyRes.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    // svc_session on http, __Host-svc_session on https.
    .find((c) => /^(__Host-)?svc_session=./.test(c));
  if (!cookie) throw new CliError("POST /auth/verify answered 200 without a svc_session cookie.", EXIT.failure, "no_session_cookie");

  ctx.store.saveSession(ctx.config.baseUrl, { address: session.address, cookie, expiresAt: session.expires_at });
  return { address: session.address, expires_at: session.expires_at, base_url: ctx.config.baseUrl, session_file: ctx.store.file };
}

/**
 * A server may only ask us to sign in to itself: signing a message for another domain would hand that
 * server a login elsewhere. On loopback, `npm run dev`'s localhost:3000 and 127.0.0.1:<port> are the same machine.
 */
function assertChallengeIsForThisServer(ctx: Context, challenge: Challenge) {
  const ours = new URL(ctx.config.baseUrl);
  const theirs = /^[^/]+$/.test(challenge.domain) ? new URL(`http://${challenge.domain}`) : null;
  const sameHost = theirs !== null && theirs.host === ours.host;
  const bothLoopback = ctx.config.isLocal && theirs !== null && isLoopbackHost(theirs.hostname);
  if (!sameHost && !bothLoopback) {
    throw new CliError(
      `${ctx.config.baseUrl} asks to sign in to "${challenge.domain}", another site; refusing to sign. Check --base-url.`,
      EXIT.failure,
      "siwe_domain_mismatch",
    );
  }
  if (challenge.chain_id !== BASE_CHAIN_ID) {
    throw new CliError(
      `The server asks to sign in on chain ${challenge.chain_id}, not Base (${BASE_CHAIN_ID}); refusing.`,
      EXIT.failure,
      "siwe_wrong_chain",
    );
  }
}
