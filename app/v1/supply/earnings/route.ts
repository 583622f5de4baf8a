import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getEarnings } from "@/lib/supply/earnings";

export const dynamic = "force-dynamic";

// GET /v1/supply/earnings – what this supplier can withdraw, has withdrawn, and has in flight
export const GET = route({ auth: "session" }, async ({ session }) => ok(await getEarnings(session.accountId)));
