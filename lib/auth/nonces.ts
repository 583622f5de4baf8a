import "server-only";
import { db, type Tx } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { randomBase62 } from "@/lib/auth/tokens";

export const NONCE_TTL_MS = 10 * 60 * 1000;

/** 128 bits as 22 base62 characters: EIP-4361 wants at least 8 alphanumerics, we want at least 96 bits. */
const NONCE_ENTROPY_BYTES = 16;

export type IssuedNonce = { nonce: string; issuedAt: Date; expiresAt: Date };

/** Unused nonces a wallet may hold at once; issuing another retires the oldest (a sign-in needs only the newest). */
export const MAX_OPEN_NONCES_PER_WALLET = 5;

/**
 * Issues a single-use nonce bound to one (checksummed) wallet. The table stays bounded without a separate job:
 * expired rows are swept on every insert, a wallet holds at most MAX_OPEN_NONCES_PER_WALLET unused ones, and
 * GET /auth/nonce is limited per client IP as a write (lib/http/rate-limit.ts).
 */
export async function issueNonce(walletAddress: string, now = new Date()): Promise<IssuedNonce> {
  const nonce = randomBase62(NONCE_ENTROPY_BYTES);
  const expiresAt = new Date(now.getTime() + NONCE_TTL_MS);
  await db.siweNonce.deleteMany({ where: { expiresAt: { lt: now } } });
  await db.$transaction([
    db.siweNonce.create({ data: { nonce, walletAddress, issuedAt: now, expiresAt } }),
    db.$executeRaw`
      DELETE FROM siwe_nonces WHERE wallet_address = ${walletAddress} AND consumed_at IS NULL AND nonce NOT IN (
        SELECT nonce FROM siwe_nonces WHERE wallet_address = ${walletAddress} AND consumed_at IS NULL
        ORDER BY issued_at DESC, nonce DESC LIMIT ${MAX_OPEN_NONCES_PER_WALLET})`,
  ]);
  return { nonce, issuedAt: now, expiresAt };
}

/** Checks, without consuming it, that a nonce was issued to this wallet and is still usable. */
export async function assertNonceUsable(nonce: string, walletAddress: string, now = new Date()): Promise<void> {
  const row = await db.siweNonce.findUnique({ where: { nonce } });
  if (!row) throw nonceInvalid("This nonce was not issued by us (or expired long ago); request a new one from GET /auth/nonce.");
  if (row.walletAddress !== walletAddress) throw nonceInvalid("This nonce was issued for another wallet; request one for yours.");
  if (row.consumedAt) throw nonceInvalid("This nonce was already used to sign in; request a new one.");
  if (row.expiresAt <= now) throw nonceInvalid("This nonce has expired; request a new one.");
}

/**
 * Consumes a nonce with one conditional update, so of two concurrent sign-ins with the same nonce
 * exactly one wins; throws for the loser.
 */
export async function consumeNonce(tx: Tx, nonce: string, walletAddress: string, now = new Date()): Promise<void> {
  const { count } = await tx.siweNonce.updateMany({
    where: { nonce, walletAddress, consumedAt: null, expiresAt: { gt: now } },
    data: { consumedAt: now },
  });
  if (count !== 1) throw nonceInvalid("This nonce was already used to sign in; request a new one.");
}

function nonceInvalid(message: string) {
  return new AppError("siwe_nonce_invalid", message);
}
