import "server-only";
import type { SessionView } from "@/lib/auth/schemas";
import { db, type Tx } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { randomBase62, sha256Hex } from "@/lib/auth/tokens";

export type SessionContext = {
  sessionId: string;
  accountId: string;
  walletAddress: string;
  expiresAt: Date;
};

/** Resolves a session cookie's token to its live server-side session, or throws 401. */
export async function getSessionOrThrow(token: string | undefined): Promise<SessionContext> {
  if (!token) throw new AppError("session_required", "Sign in with your wallet first: this route needs the svc_session cookie.");
  const session = await db.session.findUnique({
    where: { tokenHash: sha256Hex(token) },
    include: { account: { select: { walletAddress: true } } },
  });
  if (!session || session.revokedAt || session.expiresAt <= new Date()) {
    throw new AppError("session_required", "Your session has expired or was signed out; sign in again.");
  }
  return {
    sessionId: session.id,
    accountId: session.accountId,
    walletAddress: session.account.walletAddress,
    expiresAt: session.expiresAt,
  };
}

export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Opens a server-side session for an account; the returned token goes in the svc_session cookie only. */
export async function createSession(
  accountId: string,
  options: { userAgent?: string | null; now?: Date; tx?: Tx } = {},
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBase62(32);
  const expiresAt = new Date((options.now ?? new Date()).getTime() + SESSION_TTL_MS);
  await (options.tx ?? db).session.create({
    data: { tokenHash: sha256Hex(token), accountId, expiresAt, userAgent: options.userAgent?.slice(0, 256) ?? null },
  });
  return { token, expiresAt };
}

/** Ends a session server-side: its cookie stops working at once, wherever it was copied to. */
export async function revokeSession(sessionId: string, now = new Date()): Promise<void> {
  await db.session.updateMany({ where: { id: sessionId, revokedAt: null }, data: { revokedAt: now } });
}

/** Revokes the session a cookie token belongs to, if any (a fresh sign-in replaces the browser's old session). */
export async function revokeSessionByToken(token: string, now = new Date()): Promise<void> {
  await db.session.updateMany({ where: { tokenHash: sha256Hex(token), revokedAt: null }, data: { revokedAt: now } });
}

export function describeSession(session: { walletAddress: string; expiresAt: Date }): SessionView {
  return { address: session.walletAddress, expires_at: session.expiresAt.toISOString() };
}
