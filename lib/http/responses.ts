/** JSON responses. BigInt never reaches the wire as a number: money is serialized by the domain as strings. */
import "server-only";

/** Each JSON response's body text, so a server writing to Node's response need not read it back through a stream. */
const bodyTexts = new WeakMap<Response, string>();

export function json(data: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  headers.set("content-type", "application/json; charset=utf-8");
  const text = JSON.stringify(data);
  const res = new Response(text, { ...init, headers });
  bodyTexts.set(res, text);
  return res;
}

/** The body text of a response made by `json()`, undefined for any other (read its body then). */
export function jsonBodyText(res: Response): string | undefined {
  return bodyTexts.get(res);
}

export function ok(data: unknown, headers?: HeadersInit): Response {
  return json(data, { status: 200, headers });
}

export function created(data: unknown, headers?: HeadersInit): Response {
  return json(data, { status: 201, headers });
}

export function noContent(headers?: HeadersInit): Response {
  return new Response(null, { status: 204, headers });
}
