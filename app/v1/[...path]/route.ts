import { AppError } from "@/lib/errors";
import { route } from "@/lib/http/route";
import type { HttpMethod } from "@/lib/http/openapi/operation";

// any /v1/<unknown> – a JSON 404 in the API's error shape instead of the HTML not-found page
function notFound(method: HttpMethod) {
  return route(
    {
      auth: "public",
      docs: {
        operationId: `unknownV1Route${method[0]}${method.slice(1).toLowerCase()}`,
        tag: "Operations",
        summary: "Any other /v1 path",
        description: "Answers a JSON 404 in the API's error shape (instead of an HTML page) for every /v1 path no route above serves.",
        pathParams: { path: "The rest of the path (may contain slashes)." },
        responses: [],
        errors: ["not_found"],
      },
    },
    ({ req }) => {
      throw new AppError("not_found", `No route ${req.method} ${new URL(req.url).pathname}. See /v1/models for what exists.`);
    },
  );
}

export const GET = notFound("GET");
export const POST = notFound("POST");
export const PUT = notFound("PUT");
export const PATCH = notFound("PATCH");
export const DELETE = notFound("DELETE");
