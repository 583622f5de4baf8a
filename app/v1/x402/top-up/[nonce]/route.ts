import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";
import { TopUpStatusSchema } from "@/lib/payments/schemas";
import { getTopUpStatus } from "@/lib/payments/top-up-status";

export const dynamic = "force-dynamic";

// GET /v1/x402/top-up/{nonce} – what svc did with one signed top-up authorization: credited, pending, failed or never received
export const GET = route(
  {
    auth: "session",
    docs: {
      operationId: "getTopUpStatus",
      tag: "Payments",
      summary: "Look up a top-up by its authorization nonce",
      description:
        "For a client that lost the answer to a paid top-up (the connection dropped after PAYMENT-SIGNATURE was sent): what svc did with the EIP-3009 authorization carrying this nonce, from the signed-in wallet. `credited` and `failed` are final; `pending` means svc has it and credits it once the transfer is confirmed on Base (do not sign again); `not_received` means svc never took it, and once `checked_at` is past the authorization's `validBefore` it never can.",
      pathParams: { nonce: "The authorization's nonce: 0x and 64 hex digits (PAYMENT-SIGNATURE's payload.authorization.nonce)." },
      responses: [response(200, TopUpStatusSchema, "What happened to the authorization.")],
      errors: ["invalid_request"],
    },
  },
  async ({ params, session }) => ok(await getTopUpStatus(session, params.nonce)),
);
