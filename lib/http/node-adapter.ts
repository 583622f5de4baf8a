/**
 * Node's request and response objects to the web's and back, for a route handler served without Next.js: the
 * front door's direct routes (lib/http/front-door.ts) and the tests' route server.
 */
import "server-only";
import type { IncomingMessage, ServerResponse } from "node:http";
import { attachReadBody } from "@/lib/http/body";
import { jsonBodyText } from "@/lib/http/responses";

/**
 * The request body, buffered up to `limitBytes + 1` bytes: a longer body is read to its end (so the connection
 * stays usable) but only that much is kept, enough for the route's own limit check (lib/http/body.ts) to refuse it.
 */
export async function readNodeBody(incoming: IncomingMessage, limitBytes = Number.POSITIVE_INFINITY): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let kept = 0;
  for await (const chunk of incoming) {
    const buffer = chunk as Buffer;
    if (kept > limitBytes) continue;
    const room = limitBytes + 1 - kept;
    chunks.push(buffer.byteLength > room ? buffer.subarray(0, room) : buffer);
    kept += Math.min(buffer.byteLength, room);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

/**
 * A web Request for a route handler: the same method, URL and headers; the body, already read, is attached for
 * readJsonBody (lib/http/body.ts) rather than turned back into a stream.
 */
export function toWebRequest(incoming: IncomingMessage, body: Uint8Array | undefined): Request {
  // The parsed headers, not rawHeaders: Node joins repeated ones as each header's grammar wants (cookies with "; "),
  // and the front door has appended the socket peer to X-Forwarded-For there.
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.append(name, value);
  }
  const req = new Request(urlOf(incoming), { method: incoming.method, headers });
  if (body) attachReadBody(req, body);
  return req;
}

/** The request's URL on its Host; a Host that makes no URL is replaced (the path is what the handlers read). */
function urlOf(incoming: IncomingMessage): URL {
  try {
    return new URL(incoming.url ?? "/", `http://${incoming.headers.host ?? "localhost"}`);
  } catch {
    return new URL(incoming.url?.startsWith("/") ? incoming.url : "/", "http://localhost");
  }
}

/** Writes a web Response to Node's response, Set-Cookie headers one by one; a JSON body is written as made. */
export async function writeWebResponse(outgoing: ServerResponse, res: Response): Promise<void> {
  outgoing.statusCode = res.status;
  res.headers.forEach((value, name) => {
    if (name !== "set-cookie") outgoing.setHeader(name, value);
  });
  const cookies = res.headers.getSetCookie();
  if (cookies.length > 0) outgoing.setHeader("set-cookie", cookies);
  const text = jsonBodyText(res);
  if (text !== undefined) return void outgoing.end(text);
  outgoing.end(res.body ? Buffer.from(await res.arrayBuffer()) : undefined);
}
