import { ok } from "@/lib/http/responses";
import { route } from "@/lib/http/route";
import { getOpenApiDocument, OpenApiDocumentSchema } from "@/lib/openapi/document";
import { response } from "@/lib/openapi/operation";

// GET /openapi.json – the OpenAPI 3.1 description of every route, generated from the routes' own schemas
export const GET = route(
  {
    auth: "public",
    docs: {
      operationId: "getOpenApiDocument",
      tag: "Operations",
      summary: "This OpenAPI 3.1 description",
      responses: [response(200, OpenApiDocumentSchema, "The document.")],
    },
  },
  async () => {
    // Loaded when first asked for: the manifest lists this route too, so a static import would be a cycle.
    const { API_ROUTES } = await import("@/app/api-routes");
    return ok(getOpenApiDocument(API_ROUTES), { "cache-control": "public, max-age=300" });
  },
);
