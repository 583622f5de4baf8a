import { openApiJson } from "@/app/api-routes";

// GET /openapi.json – the OpenAPI 3.1 description of every route; declared in app/api-routes.ts, beside the list it describes
export const GET = openApiJson.GET;
