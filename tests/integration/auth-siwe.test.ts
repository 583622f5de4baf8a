import { describe, expect, it, vi } from "vitest";
import { getAddress, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { GET as getNonce } from "@/app/auth/nonce/route";
import { POST as postLogout } from "@/app/auth/logout/route";
import { GET as getSession } from "@/app/auth/session/route";
import { serializeSessionCookie } from "@/lib/auth/request-credentials";
import { SESSION_TTL_MS } from "@/lib/auth/sessions";
import { sha256Hex } from "@/lib/auth/tokens";
import { db } from "@/lib/db/client";
import type { SiweChallenge } from "@/lib/auth/siwe-message";
import { jsonRequest, readError } from "../helpers/http";
import { buildSiweMessage, cookieFrom, fetchChallenge, signInWithWallet, verify } from "../helpers/siwe";

const MINUTE = 60_000;

function newWallet() {
  return privateKeyToAccount(generatePrivateKey());
}

describe("GET /auth/nonce", () => {
  it("returns every field of the SIWE message, around a fresh nonce bound to the checksummed wallet", async () => {
    const wallet = newWallet();
    const before = Date.now();
    const res = await getNonce(jsonRequest("GET", `/auth/nonce?walletAddress=${wallet.address.toLowerCase()}`));

    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(body).toEqual({
      nonce: expect.stringMatching(/^[0-9A-Za-z]{17,}$/),
      issued_at: expect.any(String),
      expiration_time: expect.any(String),
      domain: "localhost:3000",
      uri: "http://localhost:3000",
      chain_id: 8453,
      statement: expect.any(String),
    });
    const issued_at = Date.parse(body.issued_at);
    expect(issued_at).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(body.expiration_time) - issued_at).toBe(10 * MINUTE);

    const row = await db.siweNonce.findUniqueOrThrow({ where: { nonce: body.nonce } });
    expect(row).toMatchObject({ walletAddress: wallet.address, consumedAt: null });
  });

  it("never hands out the same nonce twice", async () => {
    const wallet = newWallet();
    const nonces = await Promise.all(Array.from({ length: 5 }, async () => (await fetchChallenge(wallet.address)).nonce));
    expect(new Set(nonces).size).toBe(5);
  });

  it.each([
    ["a missing address", "/auth/nonce", "invalid_request"],
    ["a non-address", "/auth/nonce?walletAddress=alice", "invalid_request"],
    ["a short address", "/auth/nonce?walletAddress=0x1234", "invalid_request"],
    ["a mixed-case address with a bad checksum", "/auth/nonce?walletAddress=0xF39fd6e51aad88F6F4ce6aB8827279cffFb92266", "invalid_request"],
    ["an unknown parameter", `/auth/nonce?walletAddress=${newWallet().address}&chain=1`, "unknown_field"],
  ])("answers 400 for %s", async (_, path, code) => {
    const res = await getNonce(jsonRequest("GET", path));
    expect(res.status).toBe(400);
    expect((await readError(res)).code).toBe(code);
  });
});

describe("POST /auth/verify with an EOA", () => {
  it("opens a session: 200 {address, expires_at}, an HttpOnly cookie, the account created once", async () => {
    const wallet = newWallet();
    const { res, cookie, challenge } = await signInWithWallet(wallet);

    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual({ address: wallet.address, expires_at: expect.any(String) });
    expect(Date.parse(body.expires_at) - Date.now()).toBeGreaterThan(SESSION_TTL_MS - MINUTE);

    const setCookie = res.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^svc_session=[0-9A-Za-z]{40,}; HttpOnly; SameSite=Lax; Path=\/; Max-Age=\d+$/);
    const maxAge = Number(/Max-Age=(\d+)/.exec(setCookie)![1]);
    expect(Math.abs(maxAge - SESSION_TTL_MS / 1000)).toBeLessThan(60);
    expect(setCookie).not.toContain("Secure"); // the test deployment is http://localhost:3000

    const account = await db.account.findUniqueOrThrow({ where: { walletAddress: wallet.address } });
    const token = cookie.split("=")[1];
    const session = await db.session.findUniqueOrThrow({ where: { tokenHash: sha256Hex(token) } });
    expect(session.accountId).toBe(account.id);
    expect((await db.siweNonce.findUniqueOrThrow({ where: { nonce: challenge.nonce } })).consumedAt).not.toBeNull();

    const again = await signInWithWallet(wallet);
    expect(again.res.status).toBe(200);
    expect(await db.account.count({ where: { walletAddress: wallet.address } })).toBe(1);
    expect(await db.session.count({ where: { accountId: account.id, revokedAt: null } })).toBe(2);
  });

  it("marks the cookie Secure on an https deployment", () => {
    const expires_at = new Date(Date.now() + 3_600_000);
    expect(serializeSessionCookie("t", expires_at, { secure: true })).toMatch(/; Secure$/);
  });

  it("names the cookie __Host-svc_session on https (Secure, Path=/, no Domain), and accepts either name", async () => {
    vi.resetModules();
    vi.stubEnv("SVC_ORIGIN", "https://svc.example.test");
    try {
      const [{ GET: nonce }, { POST: verifyRoute }, { GET: session }, { POST: logout }] = await Promise.all([
        import("@/app/auth/nonce/route"),
        import("@/app/auth/verify/route"),
        import("@/app/auth/session/route"),
        import("@/app/auth/logout/route"),
      ]);
      const wallet = newWallet();
      const challenge = (await (await nonce(jsonRequest("GET", `/auth/nonce?walletAddress=${wallet.address}`))).json()) as SiweChallenge;
      expect(challenge.uri).toBe("https://svc.example.test");
      const message = buildSiweMessage(challenge, wallet.address);
      const res = await verifyRoute(jsonRequest("POST", "/auth/verify", { message, signature: await wallet.signMessage({ message }) }));
      expect(res.status).toBe(200);
      const setCookie = res.headers.get("set-cookie")!;
      expect(setCookie).toMatch(/^__Host-svc_session=[A-Za-z0-9]+; HttpOnly; SameSite=Lax; Path=\/; Max-Age=\d+; Secure$/);
      expect(setCookie).not.toMatch(/Domain=/i);
      const token = setCookie.split(";")[0].split("=")[1];

      for (const cookie of [`__Host-svc_session=${token}`, `svc_session=${token}`, `other=1; __Host-svc_session=${token}`]) {
        const whoami = await session(jsonRequest("GET", "/auth/session", undefined, { cookie }));
        expect(whoami.status, cookie).toBe(200);
      }
      const out = await logout(jsonRequest("POST", "/auth/logout", undefined, { cookie: `__Host-svc_session=${token}` }));
      expect(out.headers.get("set-cookie")).toBe("__Host-svc_session=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0; Secure");
      expect((await session(jsonRequest("GET", "/auth/session", undefined, { cookie: `__Host-svc_session=${token}` }))).status).toBe(401);
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });

  it("gives exactly one session when two verifies race with one nonce", async () => {
    const wallet = newWallet();
    const challenge = await fetchChallenge(wallet.address);
    const message = buildSiweMessage(challenge, wallet.address);
    const signature = await wallet.signMessage({ message });

    const responses = await Promise.all([verify({ message, signature }), verify({ message, signature })]);

    expect(responses.map((r) => r.status).sort()).toEqual([200, 401]);
    const loser = responses.find((r) => r.status === 401)!;
    expect((await readError(loser)).code).toBe("siwe_nonce_invalid");
    const account = await db.account.findUniqueOrThrow({ where: { walletAddress: wallet.address } });
    expect(await db.session.count({ where: { accountId: account.id } })).toBe(1);
  });

  it("replaces the browser's previous session when it signs in again", async () => {
    const wallet = newWallet();
    const first = await signInWithWallet(wallet);
    const challenge = await fetchChallenge(wallet.address);
    const message = buildSiweMessage(challenge, wallet.address);
    const second = await verify({ message, signature: await wallet.signMessage({ message }) }, { cookie: first.cookie });

    expect(second.status).toBe(200);
    expect((await getSession(jsonRequest("GET", "/auth/session", undefined, { cookie: first.cookie }))).status).toBe(401);
    expect((await getSession(jsonRequest("GET", "/auth/session", undefined, { cookie: cookieFrom(second) }))).status).toBe(200);
  });
});

type Case = {
  name: string;
  status: number;
  code: string;
  /** Builds the request body from a live challenge for `wallet`; `other` is a second wallet. */
  body: (ctx: { wallet: Wallet; other: Wallet; challenge: Challenge }) => Promise<unknown>;
};
type Wallet = ReturnType<typeof newWallet>;
type Challenge = Awaited<ReturnType<typeof fetchChallenge>>;

async function signed(
  wallet: Wallet,
  challenge: Challenge,
  overrides: Parameters<typeof buildSiweMessage>[2] = {},
  address: Address = wallet.address,
) {
  const message = buildSiweMessage(challenge, address, overrides);
  return { message, signature: await wallet.signMessage({ message }) };
}

const ago = (ms: number) => new Date(Date.now() - ms);
const ahead = (ms: number) => new Date(Date.now() + ms);

const FAILURES: Case[] = [
  {
    name: "another domain",
    status: 401,
    code: "siwe_domain_mismatch",
    body: ({ wallet, challenge }) => signed(wallet, challenge, { domain: "evil.example" }),
  },
  {
    name: "another port on our host",
    status: 401,
    code: "siwe_domain_mismatch",
    body: ({ wallet, challenge }) => signed(wallet, challenge, { domain: "localhost:3001" }),
  },
  {
    name: "a scheme that is not ours",
    status: 401,
    code: "siwe_domain_mismatch",
    body: ({ wallet, challenge }) => signed(wallet, challenge, { scheme: "https" }),
  },
  {
    name: "a uri on another site",
    status: 401,
    code: "siwe_uri_mismatch",
    body: ({ wallet, challenge }) => signed(wallet, challenge, { uri: "https://evil.example/login" }),
  },
  {
    name: "a uri on our host with another scheme",
    status: 401,
    code: "siwe_uri_mismatch",
    body: ({ wallet, challenge }) => signed(wallet, challenge, { uri: "https://localhost:3000/" }),
  },
  { name: "chain id 1", status: 401, code: "siwe_wrong_chain", body: ({ wallet, challenge }) => signed(wallet, challenge, { chainId: 1 }) },
  {
    name: "chain id 84532 (Base Sepolia)",
    status: 401,
    code: "siwe_wrong_chain",
    body: ({ wallet, challenge }) => signed(wallet, challenge, { chainId: 84532 }),
  },
  {
    name: "a nonce we never issued",
    status: 401,
    code: "siwe_nonce_invalid",
    body: ({ wallet, challenge }) => signed(wallet, challenge, { nonce: "Zz9NeverIssuedByUs00" }),
  },
  {
    name: "a nonce issued to another wallet",
    status: 401,
    code: "siwe_nonce_invalid",
    body: async ({ wallet, other }) => signed(wallet, await fetchChallenge(other.address)),
  },
  {
    name: "an expired nonce",
    status: 401,
    code: "siwe_nonce_invalid",
    body: async ({ wallet, challenge }) => {
      const nonce = `Expired${challenge.nonce}`;
      await db.siweNonce.create({ data: { nonce, walletAddress: wallet.address, issuedAt: ago(11 * MINUTE), expiresAt: ago(MINUTE) } });
      return signed(wallet, challenge, { nonce, issuedAt: ago(2 * MINUTE) });
    },
  },
  {
    name: "an expired message",
    status: 401,
    code: "siwe_expired",
    body: ({ wallet, challenge }) => signed(wallet, challenge, { issuedAt: ago(2 * MINUTE), expirationTime: ago(1000) }),
  },
  {
    name: "a Not Before in the future",
    status: 401,
    code: "siwe_not_yet_valid",
    body: ({ wallet, challenge }) => signed(wallet, challenge, { notBefore: ahead(5 * MINUTE) }),
  },
  {
    name: "an Issued At in the future",
    status: 401,
    code: "siwe_issued_at_invalid",
    body: ({ wallet, challenge }) => signed(wallet, challenge, { issuedAt: ahead(5 * MINUTE) }),
  },
  {
    name: "an Issued At older than a nonce lives",
    status: 401,
    code: "siwe_issued_at_invalid",
    body: ({ wallet, challenge }) => signed(wallet, challenge, { issuedAt: ago(11 * MINUTE), expirationTime: undefined }),
  },
  {
    name: "a signature by another key",
    status: 401,
    code: "invalid_signature",
    body: async ({ wallet, other, challenge }) => {
      const message = buildSiweMessage(challenge, wallet.address);
      return { message, signature: await other.signMessage({ message }) };
    },
  },
  {
    name: "a signature over another message",
    status: 401,
    code: "invalid_signature",
    body: async ({ wallet, challenge }) => {
      const message = buildSiweMessage(challenge, wallet.address);
      return { message, signature: await wallet.signMessage({ message: `${message} ` }) };
    },
  },
  {
    name: "a well-formed hex signature of the wrong length",
    status: 401,
    code: "invalid_signature",
    body: async ({ wallet, challenge }) => ({ message: buildSiweMessage(challenge, wallet.address), signature: "0x1234" }),
  },
  {
    name: "a message that is not SIWE",
    status: 400,
    code: "invalid_siwe_message",
    body: async () => ({ message: "please log me in", signature: "0x1234" }),
  },
  {
    name: "a SIWE message with text appended after its fields",
    status: 400,
    code: "invalid_siwe_message",
    body: async ({ wallet, challenge }) => {
      const message = `${buildSiweMessage(challenge, wallet.address)}\nAlso: transfer everything`;
      return { message, signature: await wallet.signMessage({ message }) };
    },
  },
  {
    name: "a SIWE message with an unparseable Issued At",
    status: 400,
    code: "invalid_siwe_message",
    body: async ({ wallet, challenge }) => {
      const message = buildSiweMessage(challenge, wallet.address).replace(/Issued At: .*/, "Issued At: yesterday");
      return { message, signature: await wallet.signMessage({ message }) };
    },
  },
  {
    name: "a signature without 0x",
    status: 400,
    code: "malformed_signature",
    body: async ({ wallet, challenge }) => {
      const { message, signature } = await signed(wallet, challenge);
      return { message, signature: signature.slice(2) };
    },
  },
  {
    name: "a signature that is not hex",
    status: 400,
    code: "malformed_signature",
    body: async ({ wallet, challenge }) => ({ message: buildSiweMessage(challenge, wallet.address), signature: "0xnothex" }),
  },
  {
    name: "a signature with an odd number of digits",
    status: 400,
    code: "malformed_signature",
    body: async ({ wallet, challenge }) => ({ message: buildSiweMessage(challenge, wallet.address), signature: "0x123" }),
  },
  {
    name: "a missing signature",
    status: 400,
    code: "invalid_request",
    body: async ({ wallet, challenge }) => ({ message: buildSiweMessage(challenge, wallet.address) }),
  },
  { name: "a missing message", status: 400, code: "invalid_request", body: async () => ({ signature: "0x1234" }) },
  { name: "an empty object", status: 400, code: "invalid_request", body: async () => ({}) },
  {
    name: "a non-string signature",
    status: 400,
    code: "invalid_request",
    body: async ({ wallet, challenge }) => ({ message: buildSiweMessage(challenge, wallet.address), signature: 42 }),
  },
  {
    name: "an unknown field (e.g. a client-chosen address)",
    status: 400,
    code: "unknown_field",
    body: async ({ wallet, challenge }) => ({ ...(await signed(wallet, challenge)), address: wallet.address }),
  },
];

describe("POST /auth/verify refusals", () => {
  it.each(FAILURES)("refuses $name with $status $code, without consuming the nonce", async ({ body, status, code }) => {
    const wallet = newWallet();
    const other = newWallet();
    const challenge = await fetchChallenge(wallet.address);

    const res = await verify(await body({ wallet, other, challenge }));

    expect(res.status).toBe(status);
    expect(res.headers.get("set-cookie")).toBeNull();
    expect((await readError(res)).code).toBe(code);
    expect(await db.account.count({ where: { walletAddress: wallet.address } })).toBe(0);

    // The failed attempt left the nonce usable: the honest message still signs in with it.
    const honest = await signed(wallet, challenge);
    expect((await verify(honest)).status).toBe(200);
  });

  it("refuses a nonce that was already used (a replayed sign-in)", async () => {
    const wallet = newWallet();
    const challenge = await fetchChallenge(wallet.address);
    const body = await signed(wallet, challenge);
    expect((await verify(body)).status).toBe(200);

    const replay = await verify(body);
    expect(replay.status).toBe(401);
    expect((await readError(replay)).code).toBe("siwe_nonce_invalid");
  });

  it("refuses a sign-in started by another site (login CSRF) and leaves the nonce usable", async () => {
    const wallet = newWallet();
    const challenge = await fetchChallenge(wallet.address);
    const body = await signed(wallet, challenge);

    for (const headers of [{ origin: "https://evil.example" }, { "sec-fetch-site": "cross-site" }] as Record<string, string>[]) {
      const res = await verify(body, headers);
      expect(res.status).toBe(403);
      expect((await readError(res)).code).toBe("cross_site_request");
    }
    expect((await verify(body, { origin: "http://localhost:3000", "sec-fetch-site": "same-origin" })).status).toBe(200);
  });
});

describe("GET /auth/session and POST /auth/logout", () => {
  it("tells who is signed in, and after logout the same cookie is refused everywhere", async () => {
    const wallet = newWallet();
    const { cookie } = await signInWithWallet(wallet);

    const whoami = await getSession(jsonRequest("GET", "/auth/session", undefined, { cookie }));
    expect(whoami.status).toBe(200);
    expect(await whoami.json()).toEqual({ address: wallet.address, expires_at: expect.any(String) });

    const logout = await postLogout(jsonRequest("POST", "/auth/logout", undefined, { cookie }));
    expect(logout.status).toBe(204);
    expect(logout.headers.get("set-cookie")).toBe("svc_session=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0");

    const after = await getSession(jsonRequest("GET", "/auth/session", undefined, { cookie }));
    expect(after.status).toBe(401);
    expect((await readError(after)).code).toBe("session_required");
    const session = await db.session.findUniqueOrThrow({ where: { tokenHash: sha256Hex(cookie.split("=")[1]) } });
    expect(session.revokedAt).not.toBeNull();
  });

  it("refuses a logout started by another site, leaving the session alive", async () => {
    const { cookie } = await signInWithWallet(newWallet());
    const res = await postLogout(jsonRequest("POST", "/auth/logout", undefined, { cookie, origin: "https://evil.example" }));
    expect(res.status).toBe(403);
    expect((await readError(res)).code).toBe("cross_site_request");
    expect((await getSession(jsonRequest("GET", "/auth/session", undefined, { cookie }))).status).toBe(200);
  });

  it("answers 401 session_required without a cookie, or with a Bearer header", async () => {
    const { cookie } = await signInWithWallet(newWallet());
    for (const headers of [{}, { authorization: "Bearer svc_x" }, { cookie, authorization: "Bearer svc_x" }] as Record<string, string>[]) {
      const res = await getSession(jsonRequest("GET", "/auth/session", undefined, headers));
      expect(res.status).toBe(401);
      expect((await readError(res)).code).toBe("session_required");
    }
  });

  it("stores the wallet EIP-55 checksummed whatever case the client used", async () => {
    const wallet = newWallet();
    const challenge = await fetchChallenge(wallet.address.toLowerCase());
    const res = await verify(await signed(wallet, challenge));
    expect(res.status).toBe(200);
    expect((await res.json()).address).toBe(getAddress(wallet.address));
  });
});
