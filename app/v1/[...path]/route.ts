import { AppError } from "@/lib/http/errors";
import { route } from "@/lib/http/route";

// any /v1/<unknown> – a JSON 404 in the API's error shape instead of the HTML not-found page
const notFound = route({ auth: "public" }, ({ req }) => {
  throw new AppError("not_found", `No route ${req.method} ${new URL(req.url).pathname}. See /v1/models for what exists.`);
});

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
