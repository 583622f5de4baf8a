/** The one place that reads credentials off a request: the session cookie and the Bearer header. */

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
