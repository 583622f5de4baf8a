import "server-only";
import { Redis } from "ioredis";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { processState } from "@/lib/process-state";

/**
 * Fixed one-minute windows, counted per API key, per client IP, per account for writes, and per IP for failed
 * authentication. The counter store is this instance's memory by default; RATE_LIMIT_STORE=postgres or redis
 * shares the limit between instances.
 */

const WINDOW_MS = 60_000;

export type RateLimitStore = {
  /** Adds one hit to `key` in the window starting at `windowStart` and returns the window's count. */
  hit(key: string, windowStart: number): Promise<number>;
};

export function createMemoryStore(): RateLimitStore {
  const counts = new Map<string, { windowStart: number; count: number }>();
  return {
    async hit(key, windowStart) {
      const current = counts.get(key);
      if (!current || current.windowStart !== windowStart) {
        if (counts.size > 100_000) for (const [k, v] of counts) if (v.windowStart < windowStart) counts.delete(k);
        counts.set(key, { windowStart, count: 1 });
        return 1;
      }
      current.count += 1;
      return current.count;
    },
  };
}

export function createPostgresStore(): RateLimitStore {
  return {
    async hit(key, windowStart) {
      const start = new Date(windowStart);
      const rows = await db.$queryRaw<{ count: number }[]>`
        INSERT INTO rate_limit_buckets (key, window_start, count) VALUES (${key}, ${start}, 1)
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN rate_limit_buckets.window_start = EXCLUDED.window_start THEN rate_limit_buckets.count + 1 ELSE 1 END,
          window_start = EXCLUDED.window_start
        RETURNING count`;
      return rows[0].count;
    },
  };
}

export function createRedisStore(url: string): RateLimitStore {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: true, lazyConnect: false });
  return {
    async hit(key, windowStart) {
      const bucket = `svc:rl:${key}:${windowStart}`;
      const [[, count]] = (await redis
        .multi()
        .incr(bucket)
        .pexpire(bucket, WINDOW_MS * 2)
        .exec()) as [[null, number]];
      return count;
    },
  };
}

/**
 * One store per process (lib/process-state.ts): the completion route runs in the process hosting Next (the front door's
 * direct route) and every other route in Next's server bundle, each with its own copy of this module, and a
 * client's per-IP window must count both.
 */
let store: RateLimitStore | undefined;
function defaultStore(): RateLimitStore {
  // Looked up once per module copy (the first request): the process-wide lookup is not per-request work.
  return (store ??= processState<RateLimitStore>("rate-limit-store", () =>
    env.RATE_LIMIT_STORE === "redis"
      ? createRedisStore(env.REDIS_URL!)
      : env.RATE_LIMIT_STORE === "postgres"
        ? createPostgresStore()
        : createMemoryStore(),
  ));
}

export type RateLimitRule = { name: string; key: string; limit: number };

/**
 * Counts one request against every rule; throws 429 with Retry-After when any is exceeded. Returns the
 * X-RateLimit-* headers of the tightest rule for the response.
 */
export async function enforceRateLimits(
  rules: RateLimitRule[],
  options: { store?: RateLimitStore; now?: number } = {},
): Promise<Record<string, string>> {
  const now = options.now ?? Date.now();
  const windowStart = now - (now % WINDOW_MS);
  const resetSeconds = Math.ceil((windowStart + WINDOW_MS - now) / 1000);
  const s = options.store ?? defaultStore();
  const counts = await Promise.all(rules.map((r) => s.hit(`${r.name}:${r.key}`, windowStart)));

  let tightest: Record<string, string> = {};
  let least = Infinity;
  for (const [i, rule] of rules.entries()) {
    const remaining = rule.limit - counts[i];
    const headers = {
      "x-ratelimit-limit": String(rule.limit),
      "x-ratelimit-remaining": String(Math.max(0, remaining)),
      "x-ratelimit-reset": String(resetSeconds),
    };
    if (remaining < 0) {
      throw new AppError(
        "rate_limited",
        `Rate limit exceeded: at most ${rule.limit} requests per minute per ${rule.name}. Retry in ${resetSeconds} s.`,
        {
          headers: { ...headers, "retry-after": String(resetSeconds) },
          details: { limit: rule.limit, scope: rule.name },
        },
      );
    }
    if (remaining < least) {
      least = remaining;
      tightest = headers;
    }
  }
  return tightest;
}

/**
 * What route() counts, and when. Before authentication, so requests with bad credentials are counted too:
 * every request per client IP, and writes (anything but GET/HEAD/OPTIONS, or a read that stores something)
 * per client IP again under a tighter limit. After authentication: the API key's requests, and the session
 * account's writes. The inference endpoint is limited per key and per IP, not as a write.
 */
export function preAuthRules(ip: string, request: { write: boolean; bearer: boolean }): RateLimitRule[] {
  const rules: RateLimitRule[] = [{ name: "ip", key: ip, limit: env.RATE_LIMIT_PER_IP_PER_MINUTE }];
  if (request.write && !request.bearer)
    rules.push({ name: "writes per ip", key: `w:${ip}`, limit: env.RATE_LIMIT_WRITES_PER_IP_PER_MINUTE });
  return rules;
}

export function postAuthRules(who: { apiKeyId?: string; accountId?: string; write: boolean }): RateLimitRule[] {
  if (who.apiKeyId) return [{ name: "key", key: who.apiKeyId, limit: env.RATE_LIMIT_PER_KEY_PER_MINUTE }];
  if (who.accountId && who.write)
    return [{ name: "writes per account", key: `w:${who.accountId}`, limit: env.RATE_LIMIT_WRITES_PER_ACCOUNT_PER_MINUTE }];
  return [];
}

/**
 * Counts a failed authentication (a 401) against the client IP. Within the limit the 401 stands; beyond it the
 * answer is a 429, so guessing credentials from one address is throttled on top of the per-IP limit.
 */
export async function countFailedAuthentication(ip: string, failure: AppError): Promise<AppError> {
  try {
    await enforceRateLimits([
      { name: "failed authentication per ip", key: `auth:${ip}`, limit: env.RATE_LIMIT_AUTH_FAILURES_PER_IP_PER_MINUTE },
    ]);
    return failure;
  } catch (error) {
    return error instanceof AppError ? error : failure;
  }
}

/** Of two sets of X-RateLimit-* headers, the one with fewer requests remaining. */
export function tighter(a: Record<string, string>, b: Record<string, string>): Record<string, string> {
  if (!a["x-ratelimit-remaining"]) return b;
  if (!b["x-ratelimit-remaining"]) return a;
  return Number(b["x-ratelimit-remaining"]) < Number(a["x-ratelimit-remaining"]) ? b : a;
}
