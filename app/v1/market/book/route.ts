import { z } from "zod";
import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getBook } from "@/lib/market/book";

export const dynamic = "force-dynamic";

const BookQuery = z.strictObject({ model: z.string().min(1).max(128) });

// GET /v1/market/book?model= – price levels of a model on the book, cheapest first
export const GET = route({ auth: "public", query: BookQuery }, async ({ query }) => ok(await getBook(query.model)));
