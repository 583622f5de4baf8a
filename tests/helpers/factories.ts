import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { createSession } from "@/lib/auth/sessions";
import { db } from "@/lib/db/client";

/** A fresh account for a fresh random wallet (tests never share accounts), or for the given wallet. */
export async function seedAccount(wallet: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey())) {
  const account = await db.account.create({ data: { walletAddress: wallet.address } });
  return { ...account, wallet };
}

/** A fresh account with a live session: `cookie` is the Cookie header a signed-in browser would send. */
export async function seedSignedInAccount(wallet?: PrivateKeyAccount) {
  const account = await seedAccount(wallet);
  const { token, expiresAt } = await createSession(account.id);
  return { ...account, sessionToken: token, sessionExpiresAt: expiresAt, cookie: `svc_session=${token}` };
}
