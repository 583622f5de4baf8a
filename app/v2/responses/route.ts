import { responsesRoute } from "@/lib/http/inference-routes";

export const dynamic = "force-dynamic";

// POST /v2/responses – POST /v1/responses, and with stream: true the Responses API's event stream
export const POST = responsesRoute("v2");
