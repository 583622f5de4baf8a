import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getMarketStats } from "@/lib/market/stats";

export const dynamic = "force-dynamic";

// GET /v1/market/stats – last 24 h: clears, volume in USDC and diem, VWAP per model
export const GET = route({ auth: "public" }, async () => ok(await getMarketStats()));
