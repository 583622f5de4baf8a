/** The one place that reads credentials off a request (the session cookie and the Bearer header) and writes the cookie. */
import "server-only";
import { deployment } from "@/lib/env";
import { AppError } from "@/lib/errors";

/**
 * The session cookie is `svc_session` on http (local dev), `__Host-svc_session` on https: the `__Host-` prefix makes
 * browsers accept it only with Secure, Path=/ and no Domain, so no subdomain or plain-http page can set or shadow it.
 * Both names are read, whichever the client sends; the prefixed one wins when both are present.
 */
export const SESSION_COOKIE = "svc_session";
export const SECURE_SESSION_COOKIE = "__Host-svc_session";

export function sessionCookieName(secure: boolean): string {
  return secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

export function readSessionCookie(req: Request): string | undefined {
  const header = req.headers.get("cookie");
  if (!header) return undefined;
  const found: Record<string, string> = {};
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if ((name === SECURE_SESSION_COOKIE || name === SESSION_COOKIE) && value.length > 0 && !(name in found)) found[name] = value;
  }
  return found[SECURE_SESSION_COOKIE] ?? found[SESSION_COOKIE];
}

/** The Authorization header's presence, and its Bearer token when it is one. */
export function readAuthorization(req: Request): { present: boolean; bearer?: string } {
  const header = req.headers.get("authorization");
  if (!header) return { present: false };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return { present: true, bearer: match?.[1] };
}

/** The Set-Cookie value that hands a session token to the browser; only verify sets it. */
export function serializeSessionCookie(token: string, expiresAt: Date, options: { secure: boolean; now?: Date }): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - (options.now ?? new Date()).getTime()) / 1000));
  return `${sessionCookieName(options.secure)}=${token}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAge}${options.secure ? "; Secure" : ""}`;
}

export function serializeClearedSessionCookie(options: { secure: boolean }): string {
  return `${sessionCookieName(options.secure)}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0${options.secure ? "; Secure" : ""}`;
}

/**
 * Refuses a request a browser marks as started by another site. route() applies this to session mutations;
 * sign-in applies it too, so another site cannot sign a visitor into the attacker's account (login CSRF).
 */
export function assertSameSiteRequest(req: Request): void {
  const origin = req.headers.get("origin");
  if ((origin !== null && origin !== deployment.origin) || req.headers.get("sec-fetch-site") === "cross-site") {
    throw new AppError("cross_site_request", `Cross-site request refused: expected Origin ${deployment.origin}.`);
  }
}
