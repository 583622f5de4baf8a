import { unknownRoutes } from "@/lib/http/unknown-route";

// any /v2/<unknown> – a JSON 404 in the API's error shape instead of the HTML not-found page
const unknown = unknownRoutes("v2");
export const GET = unknown.GET;
export const POST = unknown.POST;
export const PUT = unknown.PUT;
export const PATCH = unknown.PATCH;
export const DELETE = unknown.DELETE;
