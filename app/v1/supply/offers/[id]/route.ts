import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getOfferOrThrow, updateOffer, UpdateOfferBody, withdrawOffer } from "@/lib/supply/offers";

export const dynamic = "force-dynamic";

// GET /v1/supply/offers/{id} – one of the caller's offers
export const GET = route({ auth: "session" }, async ({ session, params }) => ok(await getOfferOrThrow(session.accountId, params.id)));

// PATCH /v1/supply/offers/{id} – change price, capacity, models, credentials or pause/resume
export const PATCH = route({ auth: "session", body: UpdateOfferBody }, async ({ session, params, body }) =>
  ok(await updateOffer(session.accountId, params.id, body)),
);

// DELETE /v1/supply/offers/{id} – withdraw the offer for good (kept for history)
export const DELETE = route({ auth: "session" }, async ({ session, params }) => ok(await withdrawOffer(session.accountId, params.id)));
