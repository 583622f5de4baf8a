import { created, ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { createOffer, CreateOfferBody, ListOffersQuery, listOffers } from "@/lib/supply/offers";

export const dynamic = "force-dynamic";

// GET /v1/supply/offers – the caller's offers with today's capacity, earnings and health
export const GET = route({ auth: "session", query: ListOffersQuery }, async ({ session, query }) =>
  ok(await listOffers(session.accountId, query)),
);

// POST /v1/supply/offers – post an offer; its upstream is checked first, the key is stored encrypted
export const POST = route({ auth: "session", body: CreateOfferBody }, async ({ session, body }) =>
  created(await createOffer(session.accountId, body)),
);
