import { route } from "@/lib/http/route";
import { ok } from "@/lib/http/responses";
import { listModels } from "@/lib/market/models";

export const dynamic = "force-dynamic";

// GET /v1/models – the buyable models (OpenAI list shape) with list and best posted prices
export const GET = route({ auth: "public" }, async () => ok(await listModels()));
