import "server-only";
import { createHash, randomBytes } from "node:crypto";

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A random base62 string carrying `bytes` bytes of entropy (rejection sampling keeps it uniform). For secrets. */
export function randomBase62(bytes: number): string {
  return base62(bytes, randomBytes);
}

/**
 * The same for identifiers that are not secrets (request and completion ids): the bytes come from a pooled block
 * of the CSPRNG's output, as crypto.randomUUID draws them, instead of one call per id (about 9 µs each here).
 * Secrets (keys, session tokens, nonces) keep randomBase62: a pooled block would hold them in memory before use.
 */
export function randomId(bytes: number): string {
  return base62(bytes, pooledRandomBytes);
}

/** Characters of the time prefix: base36 milliseconds since 1970, fixed width (36^9 ms is about 3,200 years). */
const TIME_CHARS = 9;

/**
 * A pooled random id led by the current time (completion ids): ids made later sort after ids made earlier, in any
 * collation (digits and lowercase letters sort alike in all of them), so each new row lands at the right edge of the
 * indexes keyed by it rather than on a random page of an index as large as the history. `bytes` random bytes follow.
 */
export function timeOrderedId(bytes: number, now = Date.now()): string {
  return now.toString(36).padStart(TIME_CHARS, "0").slice(-TIME_CHARS) + randomId(bytes);
}

/** `bytes` pooled random bytes as hex (request ids). */
export function randomHexId(bytes: number): string {
  return pooledRandomBytes(bytes).toString("hex");
}

function base62(bytes: number, random: (n: number) => Buffer): string {
  const length = Math.ceil((bytes * 8) / Math.log2(62));
  let out = "";
  while (out.length < length) {
    for (const byte of random(length)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

/** Each byte of the pool is handed out once. */
function pooledRandomBytes(n: number): Buffer {
  if (n > POOL_BYTES) return randomBytes(n);
  if (offset + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const out = pool.subarray(offset, offset + n);
  offset += n;
  return out;
}
