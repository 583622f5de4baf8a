import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";
import { db } from "@/lib/db";

/** A fresh account for a fresh random wallet (tests never share accounts). */
export async function seedAccount() {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const account = await db.account.create({ data: { walletAddress: wallet.address } });
  return { ...account, wallet };
}
