import "server-only";
import { decryptCredential } from "@/lib/upstream/key-encryption";

/**
 * Decrypted upstream keys by ciphertext: decrypting is done once per key and process. Nothing to invalidate: the
 * ciphertext comes fresh from the offer's row with every reservation, and an edited key is a new ciphertext.
 */
const decrypted = new Map<string, string>();
export function upstreamKey(ciphertext: string): string {
  let key = decrypted.get(ciphertext);
  if (key === undefined) {
    key = decryptCredential(ciphertext);
    if (decrypted.size >= 1000) decrypted.delete(decrypted.keys().next().value!);
    decrypted.set(ciphertext, key);
  }
  return key;
}
