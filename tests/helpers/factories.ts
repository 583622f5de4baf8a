import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSession } from "@/lib/auth/sessions";
import { db } from "@/lib/db";

/** A fresh account for a fresh random wallet (tests never share accounts). */
export async function seedAccount() {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const account = await db.account.create({ data: { walletAddress: wallet.address } });
  return { ...account, wallet };
}

/** A fresh account with a live session: `cookie` is the Cookie header a signed-in browser would send. */
export async function seedSignedInAccount() {
  const account = await seedAccount();
  const { token, expiresAt } = await createSession(account.id);
  return { ...account, sessionToken: token, sessionExpiresAt: expiresAt, cookie: `svc_session=${token}` };
}
