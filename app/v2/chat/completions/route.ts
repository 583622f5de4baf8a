import { chatCompletionsRoute } from "@/lib/http/inference-routes";

export const dynamic = "force-dynamic";

// POST /v2/chat/completions – POST /v1/chat/completions, and with stream: true the answer as server-sent events
export const POST = chatCompletionsRoute("v2");
