/** JSON responses. BigInt never reaches the wire as a number: money is serialized by the domain as strings. */
import "server-only";


export function json(data: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  headers.set("content-type", "application/json; charset=utf-8");
  return new Response(JSON.stringify(data), { ...init, headers });
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
