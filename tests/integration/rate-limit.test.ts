import { createConnection } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { AppError } from "@/lib/http/errors";
import {
  createMemoryStore,
  createPostgresStore,
  createRedisStore,
  enforceRateLimits,
  type RateLimitStore,
} from "@/lib/http/rate-limit";
import { readError } from "../helpers/http";
import { seedBuyer } from "../helpers/router-factories";

const MINUTE = 60_000;
// CI machines run Redis on 127.0.0.1:6379; a fresh developer machine may not, and then only that case is left out.
const REDIS_UP = await redisReachable();

function uniqueKey() {
  return `test-${Math.random().toString(36).slice(2)}`;
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

function redisReachable(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port: 6379 }, () => {
      socket.end();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

async function expectSharedLimit(a: RateLimitStore, b: RateLimitStore) {
  const rules = [{ name: "key", key: uniqueKey(), limit: 3 }];
  const now = Date.now();
  await enforceRateLimits(rules, { store: a, now });
  await enforceRateLimits(rules, { store: b, now });
  const last = await enforceRateLimits(rules, { store: a, now });
  expect(last["x-ratelimit-remaining"]).toBe("0");
  const error = await rejection(enforceRateLimits(rules, { store: b, now }));
  expect(error.status).toBe(429);
}

describe("rate limits", () => {
  it("allow the limit per window, then 429 with Retry-After and X-RateLimit headers, then reset", async () => {
    const store = createMemoryStore();
    const rules = [{ name: "key", key: uniqueKey(), limit: 2 }];
    const now = 10 * MINUTE + 15_000;
    expect(await enforceRateLimits(rules, { store, now })).toEqual({
      "x-ratelimit-limit": "2",
      "x-ratelimit-remaining": "1",
      "x-ratelimit-reset": "45",
    });
    await enforceRateLimits(rules, { store, now });
    const error = await rejection(enforceRateLimits(rules, { store, now }));
    expect(error.code).toBe("rate_limited");
    expect(error.headers).toMatchObject({ "retry-after": "45", "x-ratelimit-remaining": "0" });
    expect((await enforceRateLimits(rules, { store, now: 11 * MINUTE }))["x-ratelimit-remaining"]).toBe("1");
  });

  it("count every rule: an IP over its limit is refused whatever the key", async () => {
    const store = createMemoryStore();
    const ip = uniqueKey();
    await enforceRateLimits([{ name: "key", key: uniqueKey(), limit: 100 }, { name: "ip", key: ip, limit: 1 }], { store });
    const error = await rejection(enforceRateLimits([{ name: "key", key: uniqueKey(), limit: 100 }, { name: "ip", key: ip, limit: 1 }], { store }));
    expect(error.message).toContain("per ip");
  });

  it("are shared between instances through PostgreSQL", async () => {
    await expectSharedLimit(createPostgresStore(), createPostgresStore());
  });

  it.runIf(REDIS_UP)("are shared between instances through Redis", async () => {
    await expectSharedLimit(createRedisStore("redis://127.0.0.1:6379"), createRedisStore("redis://127.0.0.1:6379"));
  });

  it("guard POST /v1/chat/completions per key, before any work is done", async () => {
    vi.resetModules();
    vi.stubEnv("RATE_LIMIT_PER_KEY_PER_MINUTE", "2");
    try {
      const { callCompletions } = await import("../helpers/router-factories");
      const buyer = await seedBuyer(0n);
      const body = { model: "no-such-model", messages: [{ role: "user", content: "hi" }] };
      const first = await callCompletions(buyer.key, body);
      expect(first.status).toBe(404);
      expect(first.headers.get("x-ratelimit-limit")).toBe("2");
      expect(first.headers.get("x-ratelimit-remaining")).toBe("1");
      await callCompletions(buyer.key, body);
      const limited = await callCompletions(buyer.key, body);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await readError(limited)).code).toBe("rate_limited");
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });

  it("guard the unauthenticated sign-in routes per client IP", async () => {
    vi.resetModules();
    vi.stubEnv("RATE_LIMIT_PER_IP_PER_MINUTE", "2");
    try {
      const { GET: getNonce } = await import("@/app/auth/nonce/route");
      const ip = `203.0.113.${Math.floor(Math.random() * 250)}`;
      const ask = (from: string) =>
        getNonce(
          new Request("http://localhost:3000/auth/nonce?walletAddress=0x70997970C51812dc3A010C7d01b50e0d17dc79C8", {
            headers: { "x-forwarded-for": from },
          }),
        );
      expect((await ask(ip)).status).toBe(200);
      expect((await ask(ip)).status).toBe(200);
      const limited = await ask(ip);
      expect(limited.status).toBe(429);
      expect((await readError(limited)).code).toBe("rate_limited");
      expect((await ask("198.51.100.7")).status).toBe(200);
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });
});
