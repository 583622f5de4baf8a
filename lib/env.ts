import "server-only";
import { isIP } from "node:net";
import { privateKeyToAccount } from "viem/accounts";
import { z } from "zod";
import { BASE_USDC_ADDRESS } from "@/lib/chain/constants";
import { DEV_KEYS_FILE, loadOrCreateDevKeys } from "@/lib/chain/dev-keys";
import { isAnvilDevAccount } from "@/lib/chain/dev-wallet";
import { readRunningDevDatabase } from "@/lib/db/dev-database";

/**
 * The whole configuration, validated once. Nothing else reads `process.env`.
 * Defaults are for local development against `npm run dev` (loopback services, and the platform's treasury and
 * relayer keys generated for this install in SVC_DEV_KEYS_FILE); production sets every secret explicitly and
 * `SVC_ENV=production` refuses the dev ones.
 */

// The ASCII text "dev-only-secret-key-not-for-prod": obviously not a secret, local dev only.
const DEV_SECRET_KEY = "6465762d6f6e6c792d7365637265742d6b65792d6e6f742d666f722d70726f64";

const hex = (bytes: number) =>
  z.string().regex(new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`), `must be 0x followed by ${bytes * 2} hex digits`);
const flag = z
  .enum(["true", "false", "1", "0", ""])
  .optional()
  .transform((v) => v === "true" || v === "1");

const EnvSchema = z.object({
  SVC_ENV: z.enum(["development", "test", "production"]).default("development"),
  /** PostgreSQL connection string; unset in dev/tests means "start the embedded database". */
  DATABASE_URL: z.string().url().optional(),
  /** Public origin of the deployment, e.g. https://svc.example; its host is the SIWE domain. */
  SVC_ORIGIN: z.string().url().default("http://localhost:3000"),
  BASE_RPC_URL: z.string().url().default("http://127.0.0.1:8545"),
  /** How long one call to BASE_RPC_URL may take before it counts as failed (an unknown answer, never a "no"). */
  RPC_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** The RPC the browser's wallet reads through; BASE_RPC_URL often embeds a provider key, so it is never sent
   *  to browsers in production. Default: BASE_RPC_URL in dev, Base's public endpoint in production. */
  PUBLIC_BASE_RPC_URL: z.string().url().optional(),
  /** WalletConnect (Reown) project id: when set, the Connect dialog offers WalletConnect (phones without an extension). */
  WALLETCONNECT_PROJECT_ID: z
    .string()
    .regex(/^[0-9a-f]{32}$/, "must be the 32-hex-digit project id")
    .optional(),
  /**
   * The relayer's key and the treasury's address. Unset outside production: this install's own pair, generated
   * once into SVC_DEV_KEYS_FILE (lib/chain/dev-keys.ts) when first read. Never one of anvil's public accounts, in any
   * mode: the local chain reuses Base's chain id and USDC domain, so a dev top-up paid to a public key is anyone's.
   */
  RELAYER_PRIVATE_KEY: hex(32).optional(),
  TREASURY_ADDRESS: hex(20).optional(),
  SVC_DEV_KEYS_FILE: z.string().min(1).default(DEV_KEYS_FILE),
  /**
   * The treasury's key, for `npm run treasury -- approve` only (it signs the relayer's USDC allowance): set it in the
   * shell that runs that command, never in the app's environment; the app never uses it. Must be TREASURY_ADDRESS's key.
   */
  TREASURY_PRIVATE_KEY: hex(32).optional(),
  USDC_ADDRESS: hex(20).default(BASE_USDC_ADDRESS),
  /** 32-byte hex key for AES-256-GCM encryption of supplier upstream credentials. */
  SECRET_KEY: z
    .string()
    .regex(/^(0x)?[0-9a-fA-F]{64}$/, "must be 32 bytes of hex")
    .default(DEV_SECRET_KEY),
  /** Platform fee in basis points of each clear (1000 = 10%). */
  PLATFORM_FEE_BPS: z.coerce.number().int().min(0).max(5000).default(1000),
  /** Buyer max price (cents per diem) when neither request, key nor account says otherwise. */
  DEFAULT_MAX_PRICE_CENTS: z.coerce.number().int().min(1).max(10_000).default(100),
  /** Allows loopback/private upstream URLs for suppliers (local dev and tests only). */
  ALLOW_PRIVATE_UPSTREAMS: flag,
  /**
   * Private networks and hosts the operator trusts as supplier upstreams, in every mode (production included): a
   * comma-separated list of CIDR ranges or addresses (10.0.0.0/8, fd00::/8, 10.1.2.3) and host names (vllm.internal,
   * or *.gpu.internal for its subdomains). lib/upstream/ssrf.ts lets an upstream reach a private address only when its
   * host name is listed or the address is in a listed range; cloud metadata and other forbidden addresses never.
   */
  PRIVATE_UPSTREAM_ALLOW: z
    .string()
    .optional()
    .transform((text, ctx) => {
      const entries = (text ?? "")
        .split(",")
        .map((e) => e.trim().toLowerCase())
        .filter(Boolean);
      for (const entry of entries) {
        const problem = privateAllowEntryProblem(entry);
        if (problem) ctx.addIssue({ code: "custom", message: `"${entry}" ${problem}` });
      }
      return entries;
    }),
  /** Largest JSON request body accepted, in bytes. */
  MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(1_000_000),
  /**
   * How deep a JSON body may nest (objects and arrays), and how many values it may hold: checked by a linear scan of
   * the text before it is parsed (lib/json-limits.ts), so no later walk over it costs more than its size. The depth is
   * capped well below where recursive code (JSON.stringify) overflows the stack, and is at least 40: a tool's or a
   * response format's JSON schema may nest 32 levels (lib/router/schemas.ts), a few levels inside the body.
   */
  MAX_JSON_DEPTH: z.coerce.number().int().min(40).max(1000).default(64),
  MAX_JSON_VALUES: z.coerce.number().int().min(1000).default(200_000),
  /** Optional Redis URL for the shared rate-limit store. */
  REDIS_URL: z.string().url().optional(),
  /** Where rate-limit counters live: this instance's memory, or a store several instances share. */
  RATE_LIMIT_STORE: z.enum(["memory", "postgres", "redis"]).default("memory"),
  RATE_LIMIT_PER_KEY_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  RATE_LIMIT_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
  /** Writes (and reads that store something, like sign-in nonces) per client IP, and per signed-in account. */
  RATE_LIMIT_WRITES_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  RATE_LIMIT_WRITES_PER_ACCOUNT_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /** Requests with missing or bad credentials per client IP; beyond it they get 429 instead of 401. */
  RATE_LIMIT_AUTH_FAILURES_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /**
   * Proxies of ours in front of the app that append to X-Forwarded-For (a TLS terminator, a load balancer):
   * the client IP is read that many entries left of the socket peer. 0: the socket peer is the client.
   */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  /** How long the router waits for an upstream's answer before a 502 (it never retries). */
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(120_000),
  /**
   * Streams (POST /v2/chat/completions and /v2/responses with stream: true): the longest one may last, whatever it
   * does (its hold lives this long plus a grace).
   */
  STREAM_MAX_DURATION_MS: z.coerce.number().int().min(10_000).max(3_600_000).default(900_000),
  /**
   * A stream's upstream may take this long for its first token, and fall silent this long between two (keep-alive
   * comments hold the buyer's connection meanwhile); past it the stream ends as a timeout.
   */
  STREAM_IDLE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(120_000),
  /** A streaming client that reads nothing for this long while svc holds a full buffer for it is gone (client_cancelled). */
  STREAM_STALL_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
  /** Concurrent streams per API key and per account, per instance; beyond them a new stream gets 429. */
  STREAMS_PER_KEY: z.coerce.number().int().min(1).max(100_000).default(128),
  STREAMS_PER_ACCOUNT: z.coerce.number().int().min(1).max(100_000).default(256),
  /** Bounds of one x402 top-up and the smallest supplier withdrawal, as USD decimal strings. */
  TOPUP_MIN_USD: z
    .string()
    .regex(/^\d{1,9}(\.\d{1,6})?$/, "must be a USD decimal like 1.00")
    .default("1.00"),
  TOPUP_MAX_USD: z
    .string()
    .regex(/^\d{1,9}(\.\d{1,6})?$/, "must be a USD decimal like 10000.00")
    .default("10000.00"),
  WITHDRAWAL_MIN_USD: z
    .string()
    .regex(/^\d{1,9}(\.\d{1,6})?$/, "must be a USD decimal like 1.00")
    .default("1.00"),
  /** How long a top-up's EIP-3009 authorization may stay valid (x402 maxTimeoutSeconds). */
  X402_MAX_TIMEOUT_SECONDS: z.coerce.number().int().min(30).max(3600).default(120),
  /** Bearer key `npm run catalog -- sync <url>` sends to the upstream's /models (optional). */
  CATALOG_SYNC_API_KEY: z.string().min(1).optional(),
  /** Bearer token for GET /metrics (Prometheus); unset: /metrics answers 404. Required in production. */
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  /**
   * What one client connection may hold (lib/http/connections.ts). Keep-alive: how long an idle kept-alive connection
   * stays open (announced as `Keep-Alive: timeout=…`). Headers: how long a connection may take to send a request's
   * headers, counted from the connection's start for its first request (a socket that never sends a byte is closed
   * then). Request: how long a whole request, body included, may take to arrive (then 408 and closed); at least the
   * headers timeout. Per client (0: no cap): open connections per socket peer address, or, behind trusted proxies
   * (TRUST_PROXY_HOPS > 0), requests in flight per forwarded client address, since a balancer's connection carries many
   * clients' requests; the proxies' own connections are then capped per socket peer by HTTP_MAX_CONNECTIONS_PER_PROXY.
   * Lingering close: after an answer that closes its connection, what the client still sends is read and discarded, at
   * most that many bytes for at most that long, so it can read the answer (0: close at once).
   */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  HTTP_MAX_CONNECTIONS_PER_CLIENT: z.coerce.number().int().min(0).max(1_000_000).default(256),
  HTTP_MAX_CONNECTIONS_PER_PROXY: z.coerce.number().int().min(0).max(1_000_000).default(4096),
  HTTP_LINGER_MAX_BYTES: z.coerce.number().int().min(0).max(1_073_741_824).default(8_388_608),
  HTTP_LINGER_TIMEOUT_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  /** On SIGTERM: how long in-flight requests may take to finish before their holds are released and the process exits. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(25_000),
  /** This instance's name in job leases and logs (default: host name and process id). */
  INSTANCE_ID: z.string().min(1).max(200).optional(),
  /** Every background job's interval, overriding each job's own (tests; normally unset). */
  JOBS_INTERVAL_MS: z.coerce.number().int().min(100).optional(),
  /** Forwards a measured window (1 h, 24 h) needs before its figures are published or routed by (lib/market/quality). */
  QUALITY_MIN_REQUESTS: z.coerce.number().int().min(1).max(1_000_000).default(10),
  /**
   * Distinct sources (buyer accounts; the probes as one) a measured window needs too: with at most a few forwards per
   * account and hour measured, a handful of accounts cannot make a figure on their own (#37).
   */
  QUALITY_MIN_SOURCES: z.coerce.number().int().min(1).max(10_000).default(5),
  /** How often the routing snapshot of measured figures (offer_quality) is refreshed, and old measurements pruned. */
  QUALITY_REFRESH_MS: z.coerce.number().int().min(1000).max(3_600_000).default(60_000),
  /**
   * Fidelity probes (lib/probes): how often a round runs (0: never; JOBS_INTERVAL_MS does not shorten it, since
   * probes cost money), what a UTC day's probes may cost at most (micro-USDC, at the offers' prices), whether a flagged
   * offer also leaves the book until a round passes (default true), and how many offers one round probes at most.
   */
  PROBE_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(7 * 86_400_000)
    .default(6 * 3_600_000),
  PROBE_DAILY_BUDGET_MICROS: z.coerce.number().int().min(0).max(1e12).default(5_000_000),
  PROBE_DELIST_FLAGGED: z
    .enum(["true", "false", "1", "0", ""])
    .optional()
    .transform((v) => v !== "false" && v !== "0"),
  PROBE_MAX_OFFERS_PER_ROUND: z.coerce.number().int().min(1).max(10_000).default(200),
  /**
   * A flagged offer is not probed again for PROBE_FLAGGED_BACKOFF_MS after the round that flagged it, doubled for each
   * further round in a row that flags it, at most PROBE_FLAGGED_BACKOFF_MAX_MS (0: probed every round, as before).
   */
  PROBE_FLAGGED_BACKOFF_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(30 * 86_400_000)
    .default(12 * 3_600_000),
  PROBE_FLAGGED_BACKOFF_MAX_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(365 * 86_400_000)
    .default(4 * 86_400_000),
  /**
   * The secret the probes' prompts and parameters are drawn from (lib/probes/catalog.ts); unset: random per process.
   * Each probe waits a random time up to PROBE_SPREAD_MS before it is sent, so a round is not a burst (0: no wait);
   * a new or changed offer's first probe set (probation) waits up to PROBE_PROBATION_SPREAD_MS.
   */
  PROBE_PROMPT_SECRET: z.string().min(16).optional(),
  /** Development only (SVC_ENV=development): the app tops the platform's probe funds up to this at start (0: never). */
  PROBE_DEV_FUNDS_MICROS: z.coerce.number().int().min(0).max(1e12).default(5_000_000),
  PROBE_SPREAD_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  PROBE_PROBATION_SPREAD_MS: z.coerce.number().int().min(0).max(600_000).default(1500),
  /**
   * Probation (#37): a new offer, or one whose upstream, key or models change, takes no buyer traffic until its first
   * probe set passes ("verifying"); when probes cannot pay (no platform funds, no budget left today) it serves as
   * "unverified". false: offers serve at once, as before.
   */
  PROBE_PROBATION: z
    .enum(["true", "false", "1", "0", ""])
    .optional()
    .transform((v) => v !== "false" && v !== "0"),
  /** An endpoint the operator trusts to serve each model under its marketplace id; probes compare offers with it. */
  PROBE_REFERENCE_BASE_URL: z.string().url().optional(),
  PROBE_REFERENCE_API_KEY: z.string().min(1).optional(),
  /** Largest block range of one eth_getLogs call (public RPCs cap it; Base's public endpoint allows a few thousand). */
  RPC_LOG_BLOCK_RANGE: z.coerce.number().int().min(1).max(1_000_000).default(2000),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
});

/**
 * Why one PRIVATE_UPSTREAM_ALLOW entry is refused, or null. A range wider than /8 (10.0.0.0/8, fd00::/8) is refused:
 * it is not a network of the operator's but "every private address", which ALLOW_PRIVATE_UPSTREAMS says, for dev only.
 */
function privateAllowEntryProblem(entry: string): string | null {
  const [address, bits, extra] = entry.split("/");
  const version = isIP(address);
  if (version) {
    if (extra !== undefined) return "is not an address or a CIDR range";
    if (bits === undefined) return null;
    const max = version === 4 ? 32 : 128;
    const min = 8;
    if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return `has a prefix length that is not 0..${max}`;
    if (Number(bits) < min) return `is too wide (at least /${min}): list the networks your suppliers' upstreams are on`;
    return null;
  }
  if (entry.includes("/")) return "is not a valid address range (e.g. 10.0.0.0/8)";
  return /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(entry)
    ? null
    : "is neither an address, a CIDR range nor a host name (*.name for its subdomains)";
}

type ParsedEnv = z.infer<typeof EnvSchema>;
export type Env = Omit<ParsedEnv, "RELAYER_PRIVATE_KEY" | "TREASURY_ADDRESS"> & { RELAYER_PRIVATE_KEY: string; TREASURY_ADDRESS: string };

const DEV_ONLY_DEFAULTS = { SECRET_KEY: DEV_SECRET_KEY } as const;
/** Variables whose default is a local-dev value (a loopback URL): production must say them. */
const REQUIRED_IN_PRODUCTION = {
  SVC_ORIGIN: "the public origin buyers reach, e.g. https://market.example; its host is the sign-in domain",
  BASE_RPC_URL: "a Base mainnet RPC endpoint, e.g. your provider's https URL",
} as const;
const PLATFORM_KEYS = ["RELAYER_PRIVATE_KEY", "TREASURY_ADDRESS"] as const;

/** Parses an environment; exported for tests. Throws one error that lists every bad variable. */
export function parseEnv(source: Record<string, string | undefined>): Env {
  const result = EnvSchema.safeParse(source);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid environment configuration:\n${lines.join("\n")}`);
  }
  const parsed = result.data;
  if (parsed.HTTP_HEADERS_TIMEOUT_MS > parsed.HTTP_REQUEST_TIMEOUT_MS) {
    throw new Error(
      "Invalid environment configuration:\n  HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)",
    );
  }
  if (parsed.TREASURY_PRIVATE_KEY) {
    const owner = privateKeyToAccount(parsed.TREASURY_PRIVATE_KEY as `0x${string}`).address;
    if (parsed.TREASURY_ADDRESS && owner.toLowerCase() !== parsed.TREASURY_ADDRESS.toLowerCase())
      throw new Error(`Invalid environment configuration:\n  TREASURY_PRIVATE_KEY: is the key of ${owner}, not of TREASURY_ADDRESS`);
    if (isAnvilDevAccount(owner))
      throw new Error(
        "Invalid environment configuration:\n  TREASURY_PRIVATE_KEY: is one of anvil's public dev accounts, whose key anyone holds",
      );
  }
  if (parsed.RATE_LIMIT_STORE === "redis" && !parsed.REDIS_URL) {
    throw new Error("Invalid environment configuration:\n  REDIS_URL: required when RATE_LIMIT_STORE=redis");
  }
  // A public key as the relayer or the treasury is refused in every mode: the local chain is Base to a wallet.
  const publicKeys = PLATFORM_KEYS.filter((name) => {
    const value = parsed[name];
    return (
      value !== undefined && isAnvilDevAccount(name === "TREASURY_ADDRESS" ? value : privateKeyToAccount(value as `0x${string}`).address)
    );
  }).map((name) => `${name}: is one of anvil's public dev accounts, whose key anyone holds`);
  if (parsed.SVC_ENV !== "production") {
    if (publicKeys.length)
      throw new Error(
        `Invalid environment configuration:\n${publicKeys.map((p) => `  ${p} (unset it: outside production this install's own key is generated)`).join("\n")}`,
      );
    return withDevKeys(parsed);
  }
  // Every problem at once, so an operator fixes the deployment in one pass.
  const problems: string[] = [...publicKeys];
  for (const [name, devValue] of Object.entries(DEV_ONLY_DEFAULTS)) {
    if (parsed[name as keyof typeof DEV_ONLY_DEFAULTS] === devValue)
      problems.push(`${name}: must be set in production (the default is a public dev value)`);
  }
  for (const name of PLATFORM_KEYS) if (!parsed[name]) problems.push(`${name}: required in production`);
  if (!parsed.DATABASE_URL) problems.push("DATABASE_URL: required in production");
  // Their dev defaults (localhost) would start a deployment that cannot sign anyone in or settle anything.
  for (const [name, what] of Object.entries(REQUIRED_IN_PRODUCTION)) {
    if (!source[name]) problems.push(`${name}: required in production (${what})`);
  }
  if (!parsed.METRICS_TOKEN)
    problems.push("METRICS_TOKEN: required in production (the bearer token Prometheus sends to GET /metrics; openssl rand -hex 32)");
  if (parsed.ALLOW_PRIVATE_UPSTREAMS) problems.push("ALLOW_PRIVATE_UPSTREAMS: not allowed in production");
  if (problems.length) throw new Error(`Invalid environment configuration:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  return parsed as Env;
}

/**
 * Outside production, an unset RELAYER_PRIVATE_KEY or TREASURY_ADDRESS is this install's generated one, read from
 * (or first created in) SVC_DEV_KEYS_FILE when first used: a tool that never pays or settles (the catalog CLI, a
 * migration) leaves no file behind.
 */
function withDevKeys(parsed: ParsedEnv): Env {
  let keys: ReturnType<typeof loadOrCreateDevKeys> | undefined;
  const devKeys = () => (keys ??= loadOrCreateDevKeys(parsed.SVC_DEV_KEYS_FILE));
  const env = { ...parsed } as Env;
  if (parsed.RELAYER_PRIVATE_KEY === undefined)
    Object.defineProperty(env, "RELAYER_PRIVATE_KEY", { enumerable: true, get: () => devKeys().relayer.privateKey });
  if (parsed.TREASURY_ADDRESS === undefined)
    Object.defineProperty(env, "TREASURY_ADDRESS", { enumerable: true, get: () => devKeys().treasury.address });
  return env;
}

export const env: Env = parseEnv(process.env);

/** The RPC URL browsers may see (never the server's own BASE_RPC_URL in production). */
export const publicRpcUrl: string =
  env.PUBLIC_BASE_RPC_URL ?? (env.SVC_ENV === "production" ? "https://mainnet.base.org" : env.BASE_RPC_URL);

/** The deployment's host (SIWE `domain`) and origin, derived once. */
export const deployment = {
  origin: new URL(env.SVC_ORIGIN).origin,
  host: new URL(env.SVC_ORIGIN).host,
  secure: new URL(env.SVC_ORIGIN).protocol === "https:",
} as const;

/**
 * The database URL, or a clear error when the app was started without one. In development an unset DATABASE_URL is
 * the running `npm run dev`'s embedded database (lib/db/dev-database.ts), so the CLIs work beside it; never in
 * production or tests, which name their database.
 */
export function requireDatabaseUrl(): string {
  if (env.DATABASE_URL) return env.DATABASE_URL;
  const running = env.SVC_ENV === "development" ? readRunningDevDatabase() : undefined;
  if (running) return running.url;
  throw new Error(
    "DATABASE_URL is not set and no `npm run dev` is running. Start `npm run dev` (it starts an embedded database) in another terminal, or set DATABASE_URL.",
  );
}
