import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getOpenApiDocument } from "@/lib/openapi/document";

// GET /openapi.json – the OpenAPI 3.1 description of every route, generated from the routes' own schemas
export const GET = route({ auth: "public" }, () => ok(getOpenApiDocument(), { "cache-control": "public, max-age=300" }));
