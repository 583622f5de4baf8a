/** The one place that reads credentials off a request (the session cookie and the Bearer header) and writes the cookie. */
import "server-only";
import { deployment } from "@/lib/env";
import { AppError } from "@/lib/http/errors";

export const SESSION_COOKIE = "svc_session";

export function readSessionCookie(req: Request): string | undefined {
  const header = req.headers.get("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return value.length > 0 ? value : undefined;
    }
  }
  return undefined;
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
  return `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAge}${options.secure ? "; Secure" : ""}`;
}

export function serializeClearedSessionCookie(options: { secure: boolean }): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0${options.secure ? "; Secure" : ""}`;
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
