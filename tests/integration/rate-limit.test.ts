import { createConnection } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { AppError } from "@/lib/errors";
import { errorStatus } from "@/lib/http/errors";
import { createMemoryStore, createPostgresStore, createRedisStore, enforceRateLimits, type RateLimitStore } from "@/lib/http/rate-limit";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { MAX_OPEN_NONCES_PER_WALLET } from "@/lib/auth/nonces";
import { getDevAccount } from "@/lib/chain/constants";
import { db } from "@/lib/db/client";
import { seedSignedInAccount } from "../helpers/factories";
import { jsonRequest, readError } from "../helpers/http";
import { buildSiweMessage, fetchChallenge, verify } from "../helpers/siwe";
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
  expect(errorStatus(error)).toBe(429);
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
    await enforceRateLimits(
      [
        { name: "key", key: uniqueKey(), limit: 100 },
        { name: "ip", key: ip, limit: 1 },
      ],
      { store },
    );
    const error = await rejection(
      enforceRateLimits(
        [
          { name: "key", key: uniqueKey(), limit: 100 },
          { name: "ip", key: ip, limit: 1 },
        ],
        { store },
      ),
    );
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

describe("rate limits on writes and on failed authentication", () => {
  /** Route modules loaded afresh with these limits (and a fresh in-memory counter store). */
  async function withLimits<T>(limits: Record<string, string>, run: () => Promise<T>): Promise<T> {
    vi.resetModules();
    for (const [name, value] of Object.entries(limits)) vi.stubEnv(name, value);
    // The limits count in fixed one-minute windows: a case that straddled a window's end would see its count start
    // again (a third write answered 409 instead of 429 on a loaded machine), so each starts with 20 s of its window left.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 20_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
    try {
      return await run();
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  }
  const from = (ip: string, headers: Record<string, string> = {}) => ({ "x-forwarded-for": ip, ...headers });
  // A fresh address per call: the counter store lives on globalThis for the whole file, so a random address that
  // repeats one an earlier case used in the same minute would start with its hits already counted. (From .11 on:
  // the case above asks from 198.51.100.7.)
  let lastIp = 10;
  const someIp = () => `198.51.100.${++lastIp}`;

  it("count every write of a signed-in account, failed ones included: keys, offers, withdrawals, top-ups", async () => {
    await withLimits({ RATE_LIMIT_WRITES_PER_ACCOUNT_PER_MINUTE: "2" }, async () => {
      const [{ POST: createKey }, { POST: postOffer }, { POST: withdraw }, { POST: topUp }] = await Promise.all([
        import("@/app/v1/account/api-keys/route"),
        import("@/app/v1/supply/offers/route"),
        import("@/app/v1/supply/withdrawals/route"),
        import("@/app/v1/x402/top-up/route"),
      ]);
      const offer = {
        upstream_base_url: "http://127.0.0.1:9/v1",
        upstream_api_key: "k",
        models: ["llama-3.3-70b"],
        price_cents: 50,
        daily_capacity: "1",
      };
      const cases: [(req: Request) => Promise<Response>, string, unknown, number][] = [
        [createKey, "/v1/account/api-keys", {}, 201],
        [postOffer, "/v1/supply/offers", offer, 422], // an outbound GET each, and failing: still counted
        [withdraw, "/v1/supply/withdrawals", { amount: "1.00" }, 409],
        [topUp, "/v1/x402/top-up", { amount: "5.00" }, 402],
      ];
      for (const [handler, path, body, status] of cases) {
        const account = await seedSignedInAccount();
        const statuses = [];
        for (let i = 0; i < 3; i++)
          statuses.push((await handler(jsonRequest("POST", path, body, from(someIp(), { cookie: account.cookie })))).status);
        expect(statuses, path).toEqual([status, status, 429]);
      }
    });
  });

  it("count writes per client IP before authentication, and sign-in nonces as writes", async () => {
    await withLimits({ RATE_LIMIT_WRITES_PER_IP_PER_MINUTE: "2" }, async () => {
      const [{ GET: nonce }, { POST: verify }] = await Promise.all([import("@/app/auth/nonce/route"), import("@/app/auth/verify/route")]);
      const ip = someIp();
      const asks = [];
      for (let i = 0; i < 3; i++)
        asks.push(
          (await nonce(jsonRequest("GET", `/auth/nonce?walletAddress=${getDevAccount("demoBuyer").address}`, undefined, from(ip)))).status,
        );
      expect(asks).toEqual([200, 200, 429]);
      const other = someIp();
      const verifies = [];
      for (let i = 0; i < 3; i++)
        verifies.push((await verify(jsonRequest("POST", "/auth/verify", { message: "x", signature: "0x00" }, from(other)))).status);
      expect(verifies).toEqual([400, 400, 429]);
    });
  });

  it("throttle bad credentials: counted before authentication, and failed authentications get 429 beyond their own limit", async () => {
    await withLimits({ RATE_LIMIT_AUTH_FAILURES_PER_IP_PER_MINUTE: "2" }, async () => {
      const [{ POST: chat }, { GET: account }] = await Promise.all([
        import("@/app/v1/chat/completions/route"),
        import("@/app/v1/account/route"),
      ]);
      const ip = someIp();
      const body = { model: "m", messages: [{ role: "user", content: "hi" }] };
      const statuses = [];
      for (let i = 0; i < 2; i++)
        statuses.push(
          (await chat(jsonRequest("POST", "/v1/chat/completions", body, from(ip, { authorization: `Bearer svc_guess${i}` })))).status,
        );
      statuses.push((await account(jsonRequest("GET", "/v1/account", undefined, from(ip, { cookie: "svc_session=guess" })))).status);
      const limited = await chat(jsonRequest("POST", "/v1/chat/completions", body, from(ip, { authorization: "Bearer svc_guess9" })));
      statuses.push(limited.status);
      expect(statuses).toEqual([401, 401, 429, 429]);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
      // A real session from another address is not affected.
      const me = await seedSignedInAccount();
      expect((await account(jsonRequest("GET", "/v1/account", undefined, from("203.0.113.200", { cookie: me.cookie })))).status).toBe(200);
    });
    await withLimits({ RATE_LIMIT_PER_IP_PER_MINUTE: "2" }, async () => {
      const { GET: account } = await import("@/app/v1/account/route");
      const ip = someIp();
      const statuses = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await account(jsonRequest("GET", "/v1/account", undefined, from(ip, { cookie: "svc_session=guess" })))).status);
      expect(statuses).toEqual([401, 401, 429]);
    });
  });

  it("guard /healthz per client IP", async () => {
    await withLimits({ RATE_LIMIT_PER_IP_PER_MINUTE: "2" }, async () => {
      const { GET: health } = await import("@/app/healthz/route");
      const ip = someIp();
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await health(jsonRequest("GET", "/healthz", undefined, from(ip)))).status);
      expect(statuses).toEqual([200, 200, 429]);
    });
  });
});

describe("sign-in nonce rows", () => {
  it("are bounded per wallet (the newest stay usable) and purged once expired", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const expired = await db.siweNonce.create({
      data: {
        nonce: `expired${Date.now()}`,
        walletAddress: wallet.address,
        issuedAt: new Date(Date.now() - 20 * 60_000),
        expiresAt: new Date(Date.now() - 10 * 60_000),
      },
    });
    const issued: string[] = [];
    for (let i = 0; i < MAX_OPEN_NONCES_PER_WALLET + 3; i++) issued.push((await fetchChallenge(wallet.address)).nonce);

    const rows = await db.siweNonce.findMany({ where: { walletAddress: wallet.address } });
    expect(rows.map((r) => r.nonce).sort()).toEqual(issued.slice(-MAX_OPEN_NONCES_PER_WALLET).sort());
    expect(rows.some((r) => r.nonce === expired.nonce)).toBe(false);

    const message = buildSiweMessage(await fetchChallenge(wallet.address), wallet.address);
    expect((await verify({ message, signature: await wallet.signMessage({ message }) })).status).toBe(200);
  });
});
