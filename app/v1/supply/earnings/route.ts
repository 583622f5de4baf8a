import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { response } from "@/lib/http/openapi/operation";
import { getEarnings } from "@/lib/supply/earnings";
import { EarningsSchema } from "@/lib/supply/schemas";

export const dynamic = "force-dynamic";

// GET /v1/supply/earnings – what this supplier can withdraw, has withdrawn, and has in flight
export const GET = route(
  {
    auth: "session",
    docs: {
      operationId: "getEarnings",
      tag: "Supply",
      summary: "Your earnings",
      responses: [response(200, EarningsSchema, "Available to withdraw, withdrawn, and in flight.")],
    },
  },
  async ({ session }) => ok(await getEarnings(session.accountId)),
);
