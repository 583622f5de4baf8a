import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { listMarketModels } from "@/lib/market/book";

export const dynamic = "force-dynamic";

// GET /v1/market/models – every model with list price, best price, capacity and supplier count on the book
export const GET = route({ auth: "public" }, async () => ok(await listMarketModels()));
