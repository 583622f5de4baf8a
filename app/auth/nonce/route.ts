import { createSiweChallenge, NonceQuery } from "@/lib/auth/siwe";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

// GET /auth/nonce – a single-use nonce bound to the wallet, with every other field its SIWE message needs (stores a row: limited as a write)
export const GET = route({ auth: "public", query: NonceQuery, rateLimit: "write" }, async ({ query }) =>
  ok(await createSiweChallenge(query.walletAddress), { "cache-control": "no-store" }),
);
