import { route } from "@/lib/http/route";
import { ok } from "@/lib/http/responses";
import { completeChat } from "@/lib/router/complete";
import { ChatCompletionRequest } from "@/lib/router/request";

export const dynamic = "force-dynamic";

// POST /v1/chat/completions – route to the cheapest eligible offer, forward once, meter and clear
export const POST = route(
  { auth: "bearer", body: ChatCompletionRequest, rateLimit: true },
  async ({ req, body, apiKey }) => {
    const result = await completeChat({ req, body, apiKey });
    return ok(result.body, result.headers);
  },
);
