import { NonceQuery, SiweChallengeSchema } from "@/lib/auth/schemas";
import { createSiweChallenge } from "@/lib/auth/siwe";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /auth/nonce – a single-use nonce bound to the wallet, with every other field its SIWE message needs (stores a row: limited as a write)
export const GET = route(
  {
    auth: "public",
    query: NonceQuery,
    rateLimit: "write",
    docs: {
      operationId: "getNonce",
      tag: "Auth",
      summary: "Get a sign-in nonce",
      description: "A single-use nonce bound to the wallet (valid 10 minutes), with every other field the EIP-4361 message needs.",
      responses: [response(200, SiweChallengeSchema, "The fields of the message to sign.")],
    },
  },
  async ({ query }) => ok(await createSiweChallenge(query.walletAddress), { "cache-control": "no-store" }),
);
