import "server-only";
import { isIP } from "node:net";

/**
 * The client's IP address for per-IP limits. The server entry (server/main.ts, lib/http/front-door.ts) appends
 * the socket peer to X-Forwarded-For, so the right-most entry is always the connection's real peer. With
 * TRUST_PROXY_HOPS = n, the n right-most entries before it were written by our own proxies and the one left of them
 * is the client: X-Forwarded-For is read from the right, skipping exactly n trusted hops. Everything further left
 * was written by the client and is never trusted, so a new made-up value is not a new bucket. With fewer entries
 * than hops (a request that bypassed a proxy), the left-most entry is the furthest one anyone vouches for.
 */
export function clientIp(req: Request, trustedHops: number): string {
  return forwardedClientIp(req.headers.get("x-forwarded-for"), trustedHops);
}

/**
 * The same rule on the X-Forwarded-For value itself, for the front door (lib/http/connections.ts counts requests in
 * flight per client behind trusted proxies): Node joins repeated headers with ", ", so an array is one chain.
 */
export function forwardedClientIp(forwardedFor: string | string[] | null | undefined, trustedHops: number): string {
  const chain = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : (forwardedFor ?? ""))
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (chain.length === 0) return "unknown";
  return normalizeIp(chain[Math.max(0, chain.length - 1 - trustedHops)]);
}

/** One spelling per address (IPv4-mapped IPv6 as IPv4, lower case, no brackets or port); anything else is "invalid". */
function normalizeIp(entry: string): string {
  let ip = entry.toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(ip);
  if (bracketed) ip = bracketed[1];
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d+$/.test(ip)) ip = ip.slice(0, ip.lastIndexOf(":"));
  ip = ip.replace(/%.*$/, "");
  if (ip.startsWith("::ffff:") && isIP(ip.slice(7)) === 4) ip = ip.slice(7);
  return isIP(ip) ? ip : "invalid";
}
