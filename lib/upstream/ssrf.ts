import "server-only";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { deployment, env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { processSlot } from "@/lib/process-state";

/**
 * SSRF policy for supplier upstreams. A supplier names a URL; we call it from inside our network,
 * so it must not reach anything but the public internet: https only, and every address the host
 * resolves to must be public. `allowPrivate` (env.ALLOW_PRIVATE_UPSTREAMS, never in production) lets
 * local dev and tests use http and loopback/private addresses; cloud metadata, unspecified,
 * multicast and broadcast addresses stay forbidden even then. `trusted` (env.PRIVATE_UPSTREAM_ALLOW, production
 * included) opens private addresses, and plain http, to the host names and ranges the operator lists only: a
 * supplier's vLLM on the operator's own network.
 *
 * Checked twice: syntactically when an offer is posted (`assertUpstreamUrlAllowed`) and on every
 * connection, where lib/upstream/client.ts resolves the host itself and connects only to an
 * address that passed `upstreamTargetRefusal` (no DNS-rebinding window between check and connect).
 *
 * An upstream must not be svc itself either (one buyer request would otherwise clear again and again):
 * the URL's host may not be our own host name in any spelling (case, trailing dot), and the address a
 * connection goes to may not be one SVC_ORIGIN's host resolves to or one of this machine's interfaces.
 * Public addresses of ours are refused on every port; loopback and private ones (reachable only with
 * the dev flag, where the reference upstream shares 127.0.0.1 with the app) on the ports svc serves.
 */

/**
 * `allowPrivate`: every private address and plain http (the dev flag). `trusted`: the operator's allow-list
 * (PRIVATE_UPSTREAM_ALLOW), which opens private addresses to listed host names and ranges only, in every mode.
 */
export type UpstreamPolicy = { allowPrivate: boolean; trusted?: TrustedUpstreams };

/** PRIVATE_UPSTREAM_ALLOW, parsed: ranges (addresses are /32 or /128), exact host names, and `*.` suffixes. */
export type TrustedUpstreams = {
  ranges: { version: 4 | 6; base: bigint; bits: number }[];
  hosts: Set<string>;
  suffixes: string[];
  /** The entries as one string: connection pools are kept per policy (lib/upstream/client.ts). */
  key: string;
};

let defaultPolicy: UpstreamPolicy | undefined;
export function defaultUpstreamPolicy(): UpstreamPolicy {
  return (defaultPolicy ??= { allowPrivate: env.ALLOW_PRIVATE_UPSTREAMS, trusted: trustedUpstreams(env.PRIVATE_UPSTREAM_ALLOW) });
}

/** Parses allow-list entries (validated by lib/env.ts): `10.0.0.0/8`, `10.1.2.3`, `fd00::/8`, `vllm.internal`, `*.gpu.internal`. */
export function trustedUpstreams(entries: readonly string[]): TrustedUpstreams {
  const trusted: TrustedUpstreams = { ranges: [], hosts: new Set(), suffixes: [], key: entries.join(",") };
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    const [address, bits] = entry.split("/");
    const version = isIP(address);
    if (version === 4) trusted.ranges.push({ version, base: ipv4ToBigInt(address), bits: bits === undefined ? 32 : Number(bits) });
    else if (version === 6)
      trusted.ranges.push({ version, base: ipv6ToBigInt(address) ?? 0n, bits: bits === undefined ? 128 : Number(bits) });
    else if (entry.startsWith("*.")) trusted.suffixes.push(normalizeHostName(entry.slice(1)));
    else if (entry) trusted.hosts.add(normalizeHostName(entry));
  }
  return trusted;
}

/** Whether the operator listed this host name (exactly, or under a `*.` suffix) or, for an IP literal, its range. */
export function isTrustedUpstreamHost(hostname: string, policy: UpstreamPolicy): boolean {
  const trusted = policy.trusted;
  if (!trusted) return false;
  const host = normalizeHostName(hostname);
  if (isIP(host)) return isTrustedAddress(host, trusted);
  return trusted.hosts.has(host) || trusted.suffixes.some((suffix) => host.endsWith(suffix));
}

function isTrustedAddress(address: string, trusted: TrustedUpstreams): boolean {
  const ip = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const version = isIP(ip);
  let value = version === 4 ? ipv4ToBigInt(ip) : version === 6 ? ipv6ToBigInt(ip) : null;
  if (value === null) return false;
  let width = version === 4 ? 32 : 128;
  if (version === 6 && value >> 32n === 0xffffn) [value, width] = [value & 0xffffffffn, 32]; // IPv4-mapped
  return trusted.ranges.some((range) => {
    if ((range.version === 4 ? 32 : 128) !== width) return false;
    const shift = BigInt(width - range.bits);
    return value >> shift === range.base >> shift;
  });
}

/** Plain http is for the dev flag and for upstreams the operator listed (a vLLM on a private network rarely has TLS). */
export function allowsPlainHttp(hostname: string, policy: UpstreamPolicy): boolean {
  return policy.allowPrivate || isTrustedUpstreamHost(hostname, policy);
}

/** "public": routable on the internet; "private": internal (allowed only by the dev flag); "forbidden": never. */
export type AddressClass = "public" | "private" | "forbidden";

type Range = { base: bigint; bits: number; cls: Exclude<AddressClass, "public"> };

const V4_RANGES: Range[] = [
  ["0.0.0.0", 8, "forbidden"], // "this network", incl. 0.0.0.0
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "private"], // carrier-grade NAT
  ["127.0.0.0", 8, "private"], // loopback
  ["169.254.169.254", 32, "forbidden"], // cloud metadata (AWS, GCP, Azure, OpenStack)
  ["169.254.170.2", 32, "forbidden"], // AWS ECS task metadata
  ["169.254.0.0", 16, "private"], // link-local
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "private"], // IETF protocol assignments
  ["192.0.2.0", 24, "private"], // TEST-NET-1
  ["192.88.99.0", 24, "private"], // 6to4 relay anycast
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "private"], // benchmarking
  ["198.51.100.0", 24, "private"], // TEST-NET-2
  ["203.0.113.0", 24, "private"], // TEST-NET-3
  ["224.0.0.0", 4, "forbidden"], // multicast
  ["240.0.0.0", 4, "forbidden"], // reserved, incl. broadcast 255.255.255.255
].map(([ip, bits, cls]) => ({ base: ipv4ToBigInt(ip as string), bits: bits as number, cls: cls as Range["cls"] }));

const V6_RANGES: Range[] = [
  ["::", 128, "forbidden"], // unspecified
  ["::1", 128, "private"], // loopback
  ["::", 96, "forbidden"], // deprecated IPv4-compatible addresses
  ["100::", 64, "private"], // discard-only
  ["2001::", 32, "private"], // Teredo (embeds an obfuscated IPv4 address)
  ["2001:db8::", 32, "private"], // documentation
  ["fd00:ec2::254", 128, "forbidden"], // AWS metadata over IPv6
  ["fc00::", 7, "private"], // unique local
  ["fe80::", 10, "private"], // link-local
  ["fec0::", 10, "private"], // deprecated site-local
  ["ff00::", 8, "forbidden"], // multicast
].map(([ip, bits, cls]) => ({ base: ipv6ToBigInt(ip as string)!, bits: bits as number, cls: cls as Range["cls"] }));

/** Classifies an IP address literal (v4 or v6, IPv4-mapped and other IPv4-embedding forms included). */
export function classifyAddress(address: string): AddressClass {
  const ip = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const version = isIP(ip);
  if (version === 4) return classifyV4(ipv4ToBigInt(ip));
  if (version !== 6) return "forbidden";
  const value = ipv6ToBigInt(ip);
  if (value === null) return "forbidden";
  const embedded = embeddedIPv4(value);
  if (embedded !== null) return classifyV4(embedded);
  return classify(value, 128, V6_RANGES);
}

/**
 * Public addresses always; private ones under the dev flag, or when the operator trusts them (the address's range, or
 * `hostname`, the name it was resolved from); forbidden ones (metadata, unspecified, multicast) never.
 */
export function isAddressAllowed(address: string, policy: UpstreamPolicy, hostname?: string): boolean {
  const cls = classifyAddress(address);
  if (cls !== "private") return cls === "public";
  if (policy.allowPrivate) return true;
  return (
    !!policy.trusted && (isTrustedAddress(address, policy.trusted) || (hostname !== undefined && isTrustedUpstreamHost(hostname, policy)))
  );
}

/**
 * Checks a supplier's upstream base URL when an offer is posted or changed, and returns it normalized
 * (no trailing slash). Throws `upstream_url_forbidden` (400) with the reason. A host name is only
 * checked syntactically here; the addresses it resolves to are checked on every connection.
 */
export function assertUpstreamUrlAllowed(raw: string, policy: UpstreamPolicy = defaultUpstreamPolicy()): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw forbidden("upstream_base_url is not an absolute URL.");
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const plainHttp = allowsPlainHttp(host, policy);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && plainHttp)) {
    throw forbidden(
      plainHttp
        ? "upstream_base_url must use http or https."
        : "upstream_base_url must use https (plain http only for hosts the operator lists in PRIVATE_UPSTREAM_ALLOW).",
    );
  }
  if (url.username || url.password) throw forbidden("upstream_base_url must not contain credentials; send the key as upstream_api_key.");
  if (url.search || url.hash || raw.includes("?") || raw.includes("#")) {
    throw forbidden("upstream_base_url must not have a query string or fragment.");
  }
  if (isIP(host)) {
    if (!isAddressAllowed(host, policy)) throw forbidden(`upstream_base_url points at a non-public address (${host}).`);
  } else if (!policy.allowPrivate && !isTrustedUpstreamHost(host, policy) && isInternalHostName(host)) {
    throw forbidden(`upstream_base_url host "${host}" is not a public internet host name.`);
  }
  if (isOwnHostName(url, policy)) throw forbidden("upstream_base_url must not point at this marketplace itself.");
  return normalizeBaseUrl(url);
}

/** The base URL without a trailing slash, so `${base}/models` is well formed. */
export function normalizeBaseUrl(url: URL): string {
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** Names that never resolve to a public address: single labels, localhost, and reserved/internal suffixes. */
function isInternalHostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (!name.includes(".")) return true;
  return /(^|\.)(localhost|local|internal|intranet|lan|home|corp|localdomain|home\.arpa|in-addr\.arpa|ip6\.arpa|test|invalid|example)$/.test(
    name,
  );
}

/** A host name as DNS compares it: case-insensitive, and "svc.example." is "svc.example". */
function normalizeHostName(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, "")
    .toLowerCase()
    .replace(/\.+$/, "");
}

function defaultPort(url: URL): number {
  return Number(url.port) || (url.protocol === "https:" ? 443 : 80);
}

/** Our own host name in any spelling: on every port, or (dev flag, local origins) on the port svc serves. */
function isOwnHostName(url: URL, policy: UpstreamPolicy): boolean {
  const origin = new URL(deployment.origin);
  if (normalizeHostName(url.hostname) !== normalizeHostName(origin.hostname)) return false;
  return !policy.allowPrivate || defaultPort(url) === defaultPort(origin);
}

/** Addresses that are svc itself, canonical (see `canonicalAddress`), and the ports it serves on. */
export type OwnAddresses = { addresses: Set<string>; ports: Set<number> };

const OWN_ADDRESSES_TTL_MS = 60_000;
let ownAddressesCache: { at: number; value: Promise<OwnAddresses> } | undefined;

/**
 * What SVC_ORIGIN's host resolves to (system DNS, refreshed every minute) and this machine's interface
 * addresses; the ports are the origin's and the one this process listens on (set by the server entry).
 */
export function getOwnAddresses(now = Date.now()): Promise<OwnAddresses> {
  if (!ownAddressesCache || now - ownAddressesCache.at > OWN_ADDRESSES_TTL_MS) {
    ownAddressesCache = { at: now, value: loadOwnAddresses() };
  }
  return ownAddressesCache.value;
}

async function loadOwnAddresses(): Promise<OwnAddresses> {
  const origin = new URL(deployment.origin);
  const host = origin.hostname.replace(/^\[|\]$/g, "");
  const resolved = isIP(host)
    ? [host]
    : await lookup(host, { all: true, verbatim: true }).then(
        (all) => all.map((a) => a.address),
        () => [],
      );
  const interfaces = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
  const listening = LISTEN_PORT.get();
  return ownAddresses([...resolved, ...interfaces], listening ? [defaultPort(origin), listening] : [defaultPort(origin)]);
}

export function ownAddresses(addresses: string[], ports: number[]): OwnAddresses {
  return { addresses: new Set(addresses.map(canonicalAddress).filter((a): a is string => a !== null)), ports: new Set(ports) };
}

/** Where the server entry (server/main.ts) records the port this process listens on. */
export const LISTEN_PORT = processSlot<number>("listen-port");

/** One spelling per address: IPv4 dotted, IPv6 as its 128-bit value (IPv4-mapped forms count as IPv4). */
function canonicalAddress(address: string): string | null {
  const ip = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const version = isIP(ip);
  if (version === 4) return `4:${ipv4ToBigInt(ip)}`;
  if (version !== 6) return null;
  const value = ipv6ToBigInt(ip);
  if (value === null) return null;
  return value >> 32n === 0xffffn ? `4:${value & 0xffffffffn}` : `6:${value}`;
}

/** Whether address:port is svc itself: any port of a public address of ours, the served ports of a private one. */
export function isOwnAddress(address: string, port: number, own: OwnAddresses): boolean {
  const canonical = canonicalAddress(address);
  if (canonical === null || !own.addresses.has(canonical)) return false;
  return classifyAddress(address) === "public" || own.ports.has(port);
}

/**
 * Why a connection to address:port must not be made for a supplier upstream, or null when it may: the
 * policy's address classes, then self-reference. lib/upstream/client.ts asks this for every address.
 */
export async function upstreamTargetRefusal(
  address: string,
  port: number,
  policy: UpstreamPolicy,
  hostname?: string,
): Promise<string | null> {
  if (!isAddressAllowed(address, policy, hostname)) return `a non-public address (${address})`;
  if (isOwnAddress(address, port, await getOwnAddresses())) return `this marketplace itself (${address})`;
  return null;
}

function forbidden(message: string): AppError {
  return new AppError("upstream_url_forbidden", message, { details: { param: "upstream_base_url" } });
}

function classifyV4(value: bigint): AddressClass {
  return classify(value, 32, V4_RANGES);
}

/** The most specific matching range wins (the metadata /32 inside link-local /16, ::1 inside ::/96). */
function classify(value: bigint, width: number, ranges: Range[]): AddressClass {
  let best: Range | undefined;
  for (const range of ranges) {
    const shift = BigInt(width - range.bits);
    if (value >> shift === range.base >> shift && (!best || range.bits > best.bits)) best = range;
  }
  return best?.cls ?? "public";
}

/** IPv4 carried inside IPv6: IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16). */
function embeddedIPv4(value: bigint): bigint | null {
  const low32 = value & 0xffffffffn;
  if (value >> 32n === 0xffffn) return low32;
  if (value >> 32n === 0x0064ff9b_00000000_00000000n) return low32;
  if (value >> 112n === 0x2002n) return (value >> 80n) & 0xffffffffn;
  return null;
}

function ipv4ToBigInt(ip: string): bigint {
  return ip.split(".").reduce((acc, octet) => (acc << 8n) + BigInt(Number(octet)), 0n);
}

function ipv6ToBigInt(ip: string): bigint | null {
  let text = ip.toLowerCase();
  const dotted = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (dotted) {
    const v4 = ipv4ToBigInt(dotted[1]);
    text = `${text.slice(0, dotted.index)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  let value = 0n;
  for (const group of groups) {
    if (!/^[0-9a-f]{1,4}$/.test(group)) return null;
    value = (value << 16n) + BigInt(parseInt(group, 16));
  }
  return value;
}
