import { getAccountProfile, updateAccountSettings, UpdateAccountBody } from "@/lib/account/profile";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

// GET /v1/account – wallet, buyer balance (total, held, available) and max-price defaults
export const GET = route({ auth: "session" }, async ({ session }) => ok(await getAccountProfile(session.accountId)));

// PATCH /v1/account – set or clear (null) the account's default max price in cents per diem
export const PATCH = route({ auth: "session", body: UpdateAccountBody }, async ({ session, body }) =>
  ok(await updateAccountSettings(session.accountId, body)),
);
