import { mountedIn } from "@/lib/http/route";
import { GET as getCurrentKey } from "@/app/v1/key/route";

export const dynamic = "force-dynamic";

// GET /v2/key – GET /v1/key, for clients whose base URL is /v2 (the streaming surface)
export const GET = mountedIn("v2", getCurrentKey);
