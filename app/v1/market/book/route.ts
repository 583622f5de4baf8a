import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getBook } from "@/lib/market/book";
import { BookQuery, BookSchema } from "@/lib/market/schemas";
import { response } from "@/lib/http/openapi/operation";

export const dynamic = "force-dynamic";

// GET /v1/market/book?model= – price levels of a model on the book, cheapest first
export const GET = route(
  {
    auth: "public",
    query: BookQuery,
    docs: {
      operationId: "getBook",
      tag: "Market",
      summary: "A model's order book",
      responses: [response(200, BookSchema, "Price levels with capacity left today, cheapest first.")],
      errors: ["model_not_found"],
    },
  },
  async ({ query }) => ok(await getBook(query.model)),
);
