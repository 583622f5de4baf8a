import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";
import { getOfferOrThrow } from "@/lib/supply/get-offer";
import { CheckedOfferSchema, OfferSchema, UpdateOfferBody } from "@/lib/supply/schemas";
import { afterOfferSaved } from "@/lib/probes/probation";
import { updateOffer } from "@/lib/supply/update-offer";
import { UPSTREAM_CHECK_ERRORS } from "@/lib/supply/upstream-check";
import { withdrawOffer } from "@/lib/supply/withdraw-offer";

export const dynamic = "force-dynamic";

const OFFER_ID = { id: "The offer's id (UUID)." };

// GET /v1/supply/offers/{id} – one of the caller's offers
export const GET = route(
  {
    auth: "session",
    docs: {
      operationId: "getOffer",
      tag: "Supply",
      summary: "One of your offers",
      pathParams: OFFER_ID,
      responses: [response(200, OfferSchema, "The offer.")],
      errors: ["not_found"],
    },
  },
  async ({ session, params }) => ok(await getOfferOrThrow(session.accountId, params.id)),
);

// PATCH /v1/supply/offers/{id} – change price, capacity, models, credentials, declarations or pause/resume
export const PATCH = route(
  {
    auth: "session",
    body: UpdateOfferBody,
    docs: {
      operationId: "updateOffer",
      tag: "Supply",
      summary: "Change an offer",
      description:
        "Price, capacity, models, credentials, what you declare (quantization, data_policy, context_tokens, max_output_tokens; null clears a limit), or pause/resume. A new URL, key or model list is checked against the upstream first.",
      pathParams: OFFER_ID,
      requestExample: { price_cents: 80, daily_capacity: "40" },
      responses: [response(200, CheckedOfferSchema, "The changed offer.")],
      errors: ["not_found", "conflict", ...UPSTREAM_CHECK_ERRORS],
    },
  },
  async ({ session, params, body }) => ok(afterOfferSaved(await updateOffer(session.accountId, params.id, body))),
);

// DELETE /v1/supply/offers/{id} – take the offer off the book for good (kept for history)
export const DELETE = route(
  {
    auth: "session",
    docs: {
      operationId: "delistOffer",
      tag: "Supply",
      summary: "Delist an offer",
      description: "Off the book for good; kept for history. Idempotent.",
      pathParams: OFFER_ID,
      responses: [response(200, OfferSchema, "The delisted offer.")],
      errors: ["not_found"],
    },
  },
  async ({ session, params }) => ok(await withdrawOffer(session.accountId, params.id)),
);
