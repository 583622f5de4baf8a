import { chatCompletionsRoute } from "@/lib/http/inference-routes";

export const dynamic = "force-dynamic";

// POST /v1/chat/completions – route to the cheapest eligible offer, forward once, meter and clear (never streamed)
export const POST = chatCompletionsRoute("v1");
