import { describeSession } from "@/lib/auth/sessions";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";

export const dynamic = "force-dynamic";

// GET /auth/session – who is signed in (wallet) and until when
export const GET = route({ auth: "session" }, ({ session }) => ok(describeSession(session), { "cache-control": "no-store" }));
