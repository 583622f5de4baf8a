import { getCurrentKey } from "@/lib/auth/current-key";
import { CurrentKeySchema } from "@/lib/auth/schemas";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/key – the calling key's limits, usage and rate limit, through the key itself (OpenRouter's GET /api/v1/key)
export const GET = route(
  {
    auth: "bearer",
    docs: {
      operationId: "getCurrentKey",
      tag: "Inference",
      summary: "Describe the calling API key",
      description:
        "The key that makes the request: its name, prefix, spend `limit` with `limit_remaining`, `limit_reset` (daily, weekly, monthly in UTC, weeks Monday to Sunday, or null for a lifetime limit) and `limit_resets_at`, its `usage` in total and in the current UTC day, week and month (from its clears), its max price, expiry and rate limit. OpenRouter's field names for its key endpoint, with money as USDC decimal strings. A request reserved before a reset counts against the period it was reserved in. Counts against the key's rate limit.",
      responses: [response(200, CurrentKeySchema, "The key.")],
    },
  },
  async ({ apiKey }) => ok(await getCurrentKey(apiKey.apiKeyId), { "cache-control": "no-store" }),
);
