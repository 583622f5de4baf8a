import { mountedIn } from "@/lib/http/route";
import { GET as getGeneration } from "@/app/v1/generations/[id]/route";

export const dynamic = "force-dynamic";

// GET /v2/generations/{id} – GET /v1/generations/{id}, for clients whose base URL is /v2 (the streaming surface)
export const GET = mountedIn("v2", getGeneration);
