import { getAccountProfile, updateAccountSettings } from "@/lib/account/profile";
import { AccountSchema, UpdateAccountBody } from "@/lib/account/schemas";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/account – wallet, buyer balance (total, held, available) and max-price defaults
export const GET = route(
  {
    auth: "session",
    docs: {
      operationId: "getAccount",
      tag: "Account",
      summary: "The signed-in account",
      description: "Wallet, buyer balance (total, held, available), max-price defaults and default provider preferences.",
      responses: [response(200, AccountSchema, "The account.")],
    },
  },
  async ({ session }) => ok(await getAccountProfile(session.accountId)),
);

// PATCH /v1/account – set or clear (null) the account's default max price in cents per diem and default provider preferences
export const PATCH = route(
  {
    auth: "session",
    body: UpdateAccountBody,
    docs: {
      operationId: "updateAccount",
      tag: "Account",
      summary: "Set the account's default max price and provider preferences",
      description:
        "Only the fields sent change. default_max_price_cents: cents per diem the account pays at most when neither the request nor the key says; null = the platform default. provider_preferences: the default provider object for every key of the account (see the chat request's provider), under each key's own and each request's, field by field; null = none. Offer and supplier ids must name an offer or a supplier with offers (400 naming the field).",
      requestExample: { default_max_price_cents: 90, provider_preferences: { sort: "price", data_collection: "deny" } },
      responses: [response(200, AccountSchema, "The updated account.")],
    },
  },
  async ({ session, body }) => ok(await updateAccountSettings(session.accountId, body)),
);
