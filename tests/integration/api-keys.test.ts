import { describe, expect, it } from "vitest";
import { GET as listKeys, POST as createKey } from "@/app/v1/account/api-keys/route";
import { DELETE as deleteKey } from "@/app/v1/account/api-keys/[id]/route";
import { GET as getAccount } from "@/app/v1/account/route";
import { getApiKeyOrThrow } from "@/lib/auth/api-key-auth";
import { sha256Hex } from "@/lib/auth/tokens";
import { db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { errorStatus } from "@/lib/http/errors";
import { jsonRequest, readError, routeParams } from "../helpers/http";
import { seedSignedInAccount } from "../helpers/factories";

type Created = {
  id: string;
  key: string;
  name: string;
  prefix: string;
  created_at: string;
  max_price_cents: number | null;
  spend_limit: string | null;
  expires_at: string | null;
};

async function create(cookie: string, body: unknown = {}, headers: Record<string, string> = {}) {
  return createKey(jsonRequest("POST", "/v1/account/api-keys", body, { cookie, ...headers }));
}

async function createOk(cookie: string, body: unknown = {}): Promise<Created> {
  const res = await create(cookie, body);
  expect(res.status).toBe(201);
  return (await res.json()) as Created;
}

function revoke(cookie: string, id: string, headers: Record<string, string> = {}) {
  return deleteKey(jsonRequest("DELETE", `/v1/account/api-keys/${id}`, undefined, { cookie, ...headers }), routeParams({ id }));
}

/** How route() answers a thrown AppError: its status and code. */
const answered = (error: unknown) => ({ status: errorStatus(error as AppError), code: (error as AppError).code });

async function expectKeyRefused(key: string) {
  const error = await getApiKeyOrThrow(key).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(AppError);
  expect(answered(error)).toEqual({ status: 401, code: "invalid_api_key" });
}

describe("POST /v1/account/api-keys", () => {
  it("creates a key that works at once, with its limits, showing the secret only here", async () => {
    const buyer = await seedSignedInAccount();
    const expires_at = new Date(Date.now() + 86_400_000).toISOString();
    const res = await create(buyer.cookie, { name: "agent", max_price_cents: 150, spend_limit: "25.5", expires_at });

    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(body).toMatchObject({ name: "agent", max_price_cents: 150, spend_limit: "25.500000", expires_at });
    expect(body.key).toMatch(/^svc_[0-9A-Za-z]{43,}$/);
    expect(body.prefix).toBe(body.key.slice(0, 12));
    expect(Date.parse(body.created_at)).not.toBeNaN();

    const resolved = await getApiKeyOrThrow(body.key);
    expect(resolved).toEqual({
      apiKeyId: body.id,
      keyHash: sha256Hex(body.key),
      accountId: buyer.id,
      maxPriceCents: 150,
      spendLimitMicros: 25_500_000n,
      accountDefaultMaxPriceCents: null,
    });
  });

  it("defaults: a name, no price cap, no spend limit, no expiry", async () => {
    const buyer = await seedSignedInAccount();
    const body = await createOk(buyer.cookie);
    expect(body).toMatchObject({ name: "default", max_price_cents: null, spend_limit: null, expires_at: null });
    const explicit = await createOk(buyer.cookie, { max_price_cents: null, spend_limit: null, expires_at: null });
    expect(explicit).toMatchObject({ max_price_cents: null, spend_limit: null, expires_at: null });
  });

  it("gives every key its own secret", async () => {
    const buyer = await seedSignedInAccount();
    const keys = await Promise.all([1, 2, 3].map(async () => (await createOk(buyer.cookie)).key));
    expect(new Set(keys).size).toBe(3);
  });

  it.each([
    ["max_price_cents 0", { max_price_cents: 0 }, "invalid_request"],
    ["max_price_cents 10001", { max_price_cents: 10_001 }, "invalid_request"],
    ["a fractional max_price_cents", { max_price_cents: 1.5 }, "invalid_request"],
    ["max_price_cents as a string", { max_price_cents: "100" }, "invalid_request"],
    ["a spend limit in exponent notation", { spend_limit: "1e3" }, "invalid_amount"],
    ["a negative spend limit", { spend_limit: "-1" }, "invalid_amount"],
    ["a spend limit with 7 decimals", { spend_limit: "1.0000001" }, "invalid_amount"],
    ["a zero spend limit", { spend_limit: "0" }, "amount_out_of_range"],
    ["a numeric spend limit", { spend_limit: 5 }, "invalid_request"],
    ["an expiry in the past", { expires_at: new Date(Date.now() - 1000).toISOString() }, "invalid_request"],
    ["an expiry that is not ISO 8601", { expires_at: "tomorrow" }, "invalid_request"],
    ["an empty name", { name: " " }, "invalid_request"],
    ["a name over 100 characters", { name: "x".repeat(101) }, "invalid_request"],
    ["an unknown field", { scopes: ["all"] }, "unknown_field"],
  ])("refuses %s with 400", async (_, body, code) => {
    const buyer = await seedSignedInAccount();
    const res = await create(buyer.cookie, body);
    expect(res.status).toBe(400);
    expect((await readError(res)).code).toBe(code);
    expect(await db.apiKey.count({ where: { accountId: buyer.id } })).toBe(0);
  });

  it("accepts spend limits with up to 6 decimals exactly", async () => {
    const buyer = await seedSignedInAccount();
    expect((await createOk(buyer.cookie, { spend_limit: "0.000001" })).spend_limit).toBe("0.000001");
    expect((await createOk(buyer.cookie, { spend_limit: "2.01" })).spend_limit).toBe("2.010000");
  });

  it("is refused with a Bearer key (session routes take no API keys) and from another site", async () => {
    const buyer = await seedSignedInAccount();
    const { key } = await createOk(buyer.cookie);

    const bearer = await createKey(jsonRequest("POST", "/v1/account/api-keys", {}, { authorization: `Bearer ${key}` }));
    expect(bearer.status).toBe(401);
    expect((await readError(bearer)).code).toBe("session_required");

    for (const headers of [{ origin: "https://evil.example" }, { "sec-fetch-site": "cross-site" }] as Record<string, string>[]) {
      const res = await create(buyer.cookie, {}, headers);
      expect(res.status).toBe(403);
      expect((await readError(res)).code).toBe("cross_site_request");
    }
    expect(await db.apiKey.count({ where: { accountId: buyer.id } })).toBe(1);
  });
});

describe("GET /v1/account/api-keys", () => {
  it("lists the caller's keys, newest first, with limits and usage but never a secret", async () => {
    const buyer = await seedSignedInAccount();
    const other = await seedSignedInAccount();
    const first = await createOk(buyer.cookie, { name: "first", spend_limit: "10" });
    const second = await createOk(buyer.cookie, { name: "second", max_price_cents: 90 });
    await createOk(other.cookie, { name: "not mine" });

    const res = await listKeys(jsonRequest("GET", "/v1/account/api-keys", undefined, { cookie: buyer.cookie }));
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(first.key);
    expect(text).not.toContain(second.key);
    expect(text).not.toContain(sha256Hex(first.key));

    const { object, data } = JSON.parse(text);
    expect(object).toBe("list");
    expect(data.map((k: { name: string }) => k.name)).toEqual(["second", "first"]);
    expect(data[1]).toEqual({
      id: first.id,
      name: "first",
      prefix: first.prefix,
      created_at: first.created_at,
      last_used_at: null,
      max_price_cents: null,
      spend_limit: "10.000000",
      limit_reset: null,
      spent: "0.000000",
      period_spent: null,
      limit_resets_at: null,
      expires_at: null,
      revoked_at: null,
      provider_preferences: null,
    });
  });
});

describe("DELETE /v1/account/api-keys/{id}", () => {
  it("revokes the key: refused at once, listed with revoked_at, idempotent", async () => {
    const buyer = await seedSignedInAccount();
    const { id, key } = await createOk(buyer.cookie);
    const kept = await createOk(buyer.cookie);
    await getApiKeyOrThrow(key);

    const res = await revoke(buyer.cookie, id);
    expect(res.status).toBe(200);
    const revoked = await res.json();
    expect(revoked).toMatchObject({ id, revoked_at: expect.any(String) });
    expect(JSON.stringify(revoked)).not.toContain(key);

    await expectKeyRefused(key);
    await getApiKeyOrThrow(kept.key);

    const again = await revoke(buyer.cookie, id);
    expect(again.status).toBe(200);
    expect((await again.json()).revoked_at).toBe(revoked.revoked_at);

    const list = await (await listKeys(jsonRequest("GET", "/v1/account/api-keys", undefined, { cookie: buyer.cookie }))).json();
    expect(list.data.find((k: { id: string }) => k.id === id).revoked_at).toBe(revoked.revoked_at);
  });

  it("answers 404 for another wallet's key (which keeps working), an unknown id and a malformed id", async () => {
    const owner = await seedSignedInAccount();
    const intruder = await seedSignedInAccount();
    const { id, key } = await createOk(owner.cookie);

    for (const target of [id, crypto.randomUUID(), "not-a-uuid", "1 OR 1=1"]) {
      const res = await revoke(intruder.cookie, target);
      expect(res.status).toBe(404);
      expect((await readError(res)).code).toBe("not_found");
    }
    expect(await getApiKeyOrThrow(key)).toMatchObject({ apiKeyId: id, accountId: owner.id });
  });

  it("is refused from another site and with a Bearer key", async () => {
    const buyer = await seedSignedInAccount();
    const { id, key } = await createOk(buyer.cookie);

    const crossSite = await revoke(buyer.cookie, id, { origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);
    expect((await readError(crossSite)).code).toBe("cross_site_request");

    const bearer = await deleteKey(
      jsonRequest("DELETE", `/v1/account/api-keys/${id}`, undefined, { authorization: `Bearer ${key}` }),
      routeParams({ id }),
    );
    expect(bearer.status).toBe(401);
    expect((await readError(bearer)).code).toBe("session_required");
    await getApiKeyOrThrow(key);
  });
});

describe("API key lifecycle", () => {
  it("refuses an expired key", async () => {
    const buyer = await seedSignedInAccount();
    const { id, key } = await createOk(buyer.cookie, { expires_at: new Date(Date.now() + 60_000).toISOString() });
    await getApiKeyOrThrow(key);
    await db.apiKey.update({ where: { id }, data: { expiresAt: new Date(Date.now() - 1) } });
    await expectKeyRefused(key);
  });

  it("refuses unknown keys and non-svc tokens", async () => {
    await expectKeyRefused("svc_doesnotexist");
    const error = await getApiKeyOrThrow("sk-openai-style").catch((e: unknown) => e);
    expect(answered(error)).toEqual({ status: 401, code: "invalid_api_key" });
    expect(answered(await getApiKeyOrThrow(undefined).catch((e: unknown) => e))).toEqual({ status: 401, code: "missing_credentials" });
  });

  it("records last_used_at at most once a minute, not on every request", async () => {
    const buyer = await seedSignedInAccount();
    const { id, key } = await createOk(buyer.cookie);
    const t0 = new Date();

    await getApiKeyOrThrow(key, t0);
    expect((await db.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt).toEqual(t0);

    await getApiKeyOrThrow(key, new Date(t0.getTime() + 30_000));
    expect((await db.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt).toEqual(t0);

    const t2 = new Date(t0.getTime() + 61_000);
    await getApiKeyOrThrow(key, t2);
    expect((await db.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt).toEqual(t2);
  });

  it("keeps the secret out of every response but the creation one, and out of every stored column", async () => {
    const buyer = await seedSignedInAccount();
    const { id, key } = await createOk(buyer.cookie, { name: "scan", spend_limit: "1" });
    await getApiKeyOrThrow(key);

    const responses = [
      await listKeys(jsonRequest("GET", "/v1/account/api-keys", undefined, { cookie: buyer.cookie })),
      await getAccount(jsonRequest("GET", "/v1/account", undefined, { cookie: buyer.cookie })),
      await revoke(buyer.cookie, id),
      await revoke(buyer.cookie, id),
    ];
    for (const res of responses) {
      expect(res.status).toBe(200);
      expect(await res.text()).not.toContain(key);
      expect([...res.headers.values()].join("\n")).not.toContain(key);
    }

    const secrets = [key, key.slice(4), buyer.sessionToken];
    expect(await countColumnsContaining(["api_keys", "sessions"], secrets)).toEqual([]);
    const stored = await db.apiKey.findUniqueOrThrow({ where: { id } });
    expect(stored.keyHash).toBe(sha256Hex(key));
  });
});

/** Every column of the tables, read as text, that contains one of the secrets: "table.column". */
async function countColumnsContaining(tables: string[], secrets: string[]): Promise<string[]> {
  const columns = await db.$queryRaw<{ table_name: string; column_name: string }[]>`
    SELECT table_name::text AS table_name, column_name::text AS column_name
    FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name::text = ANY(${tables})`;
  expect(columns.length).toBeGreaterThan(10);
  const hits: string[] = [];
  for (const { table_name, column_name } of columns) {
    for (const secret of secrets) {
      const [{ n }] = await db.$queryRawUnsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM "${table_name}" WHERE strpos("${column_name}"::text, $1) > 0`,
        secret,
      );
      if (n > 0) hits.push(`${table_name}.${column_name}`);
    }
  }
  return hits;
}
