import { mountedIn } from "@/lib/http/route";
import { GET as listModels } from "@/app/v1/models/route";

export const dynamic = "force-dynamic";

// GET /v2/models – GET /v1/models, for clients whose base URL is /v2 (the streaming surface)
export const GET = mountedIn("v2", listModels);
