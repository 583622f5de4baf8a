import "server-only";
import { processCache } from "@/lib/cache";
import { decryptCredential } from "@/lib/upstream/key-encryption";

/**
 * Decrypted upstream keys by ciphertext: decrypting is done once per key and process. Nothing to invalidate, so no
 * TTL: the ciphertext comes fresh from the offer's row with every reservation, and an edited key is a new ciphertext.
 */
const decrypted = processCache<string>("upstream-keys", 1000);

export function upstreamKey(ciphertext: string): string {
  let key = decrypted.get(ciphertext);
  if (key === undefined) {
    key = decryptCredential(ciphertext);
    decrypted.set(ciphertext, key);
  }
  return key;
}
