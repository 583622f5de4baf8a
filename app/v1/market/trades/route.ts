import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { listTrades, TradesQuery } from "@/lib/market/trades";

export const dynamic = "force-dynamic";

// GET /v1/market/trades?model=&limit= – recent clears, newest first, without identities
export const GET = route({ auth: "public", query: TradesQuery }, async ({ query }) => ok(await listTrades(query)));
