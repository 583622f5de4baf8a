/** Builds requests for route handlers the way Next.js hands them over (same origin as the deployment). */
const ORIGIN = "http://localhost:3000";

export function jsonRequest(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Request {
  return new Request(`${ORIGIN}${path}`, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

export function routeParams(params: Record<string, string | string[]>) {
  return { params: Promise.resolve(params) };
}

export async function readError(res: Response) {
  const body = (await res.json()) as { error: { message: string; type: string; code: string } };
  return body.error;
}
