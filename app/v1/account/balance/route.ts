import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getBalance } from "@/lib/ledger/accounts";
import { formatMicros } from "@/lib/money";

export const dynamic = "force-dynamic";

// GET /v1/account/balance – the prepaid buying balance: available to spend, held by in-flight requests, and their total
export const GET = route({ auth: "session" }, async ({ session }) => {
  const balance = await getBalance("buyer", session.accountId);
  return ok({
    available: formatMicros(balance.availableMicros),
    held: formatMicros(balance.heldMicros),
    total: formatMicros(balance.totalMicros),
  });
});
