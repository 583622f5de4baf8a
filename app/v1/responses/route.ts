import { responsesRoute } from "@/lib/http/inference-routes";

export const dynamic = "force-dynamic";

// POST /v1/responses – the Responses API's stateless subset, served as one chat completion (the same pipeline, one clear)
export const POST = responsesRoute("v1");
