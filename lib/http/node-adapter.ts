/**
 * Node's request and response objects to the web's and back, for a route handler served without Next.js: the
 * front door's direct routes (lib/http/front-door.ts) and the tests' route server.
 */
import "server-only";
import type { IncomingMessage, ServerResponse } from "node:http";
import { attachReadBody } from "@/lib/http/body";
import { closeLingering } from "@/lib/http/connections";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { jsonBodyText } from "@/lib/http/responses";

/**
 * The request body, buffered up to `limitBytes + 1` bytes: a longer body is read to its end (so the connection
 * stays usable) but only that much is kept, enough for the route's own limit check (lib/http/body.ts) to refuse it.
 * For servers in front of test routes; the front door reads its direct routes' bodies with lazyNodeBody instead.
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
 * A request body read only if and when the route asks for it (route() authenticates first, and checks
 * Content-Length against its limit before it reads), and never past `limitBytes + 1` bytes: reading stops there,
 * enough for the route to refuse it with 413. `disposition` says what the connection needs once the answer is out.
 */
export type LazyNodeBody = {
  read: () => Promise<Uint8Array>;
  /**
   * "keep": the body was read whole, or its rest (within the limit) can be discarded after the answer;
   * "close": the rest is beyond the limit or was never going to be read (the connection must close).
   */
  disposition: () => "keep" | "close";
  /**
   * Reads and discards what is left of a body the route did not read, up to the limit; beyond it, closes the
   * connection once `answer` is out, lingering (lib/http/connections.ts) so the client can still read it.
   */
  discardRest: (answer: ServerResponse) => void;
};

export function lazyNodeBody(incoming: IncomingMessage, limitBytes: number): LazyNodeBody {
  const declared = declaredLength(incoming);
  let reading: Promise<Uint8Array> | undefined;
  let overLimit = false;
  const read = () =>
    (reading ??= readUpTo(incoming, limitBytes).then((result) => {
      overLimit = result.overLimit;
      return result.bytes;
    }));
  return {
    read,
    disposition: () => {
      if (incoming.complete) return "keep";
      if (overLimit || (declared !== undefined && declared > limitBytes)) return "close";
      return reading ? "close" : "keep";
    },
    discardRest: (answer) => {
      if (incoming.complete || reading) return;
      let seen = 0;
      const discard = (chunk: Buffer) => {
        seen += chunk.byteLength;
        if (seen <= limitBytes) return;
        incoming.off("data", discard);
        const socket = incoming.socket;
        if (answer.writableFinished) closeLingering(socket);
        else answer.once("finish", () => closeLingering(socket));
      };
      incoming.on("data", discard);
    },
  };
}

/** The body's declared length; undefined when it has none (chunked, or no body). */
function declaredLength(incoming: IncomingMessage): number | undefined {
  const header = incoming.headers["content-length"];
  return header !== undefined && /^\d+$/.test(header) ? Number(header) : undefined;
}

function readUpTo(incoming: IncomingMessage, limitBytes: number): Promise<{ bytes: Uint8Array; overLimit: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    const done = (overLimit: boolean) => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("close", onClose);
      // Over the limit: the rest stays unread (the connection closes after the 413).
      if (overLimit) incoming.pause();
      resolve({ bytes: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), overLimit });
    };
    const onData = (chunk: Buffer) => {
      const room = limitBytes + 1 - kept;
      chunks.push(chunk.byteLength > room ? chunk.subarray(0, room) : chunk);
      kept += Math.min(chunk.byteLength, room);
      if (kept > limitBytes) done(true);
    };
    const onEnd = () => done(false);
    const onClose = () => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      reject(new AppError("invalid_request", "The connection closed before the request body was complete."));
    };
    incoming.on("data", onData);
    incoming.once("end", onEnd);
    incoming.once("close", onClose);
  });
}

/**
 * A web Request for a route handler: the same method, URL and headers; the body, already read or read when asked
 * for, is attached for readJsonBody (lib/http/body.ts) rather than turned back into a stream.
 */
export function toWebRequest(incoming: IncomingMessage, body: Uint8Array | (() => Promise<Uint8Array>) | undefined): Request {
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

/**
 * Writes a web Response to Node's response, Set-Cookie headers one by one; a JSON body is written as made. Any other
 * body is piped as it is produced (a stream's events reach the client as they are made, never buffered whole):
 * headers go out at once, each chunk waits for the socket to drain what it holds (so a client that reads slowly
 * slows the producer, which holds at most one chunk), and a client that hangs up cancels the body's stream, which is
 * how its producer learns it (lib/router/stream.ts). A client that reads nothing for STREAM_STALL_MS while a chunk
 * waits has its connection closed (then the same cancel): a stalled reader holds a socket and its buffers for a
 * bounded time, even after the producer has finished.
 */
export async function writeWebResponse(outgoing: ServerResponse, res: Response): Promise<void> {
  outgoing.statusCode = res.status;
  res.headers.forEach((value, name) => {
    if (name !== "set-cookie") outgoing.setHeader(name, value);
  });
  const cookies = res.headers.getSetCookie();
  if (cookies.length > 0) outgoing.setHeader("set-cookie", cookies);
  const text = jsonBodyText(res);
  if (text !== undefined) return void outgoing.end(text);
  if (!res.body) return void outgoing.end();
  await pipeBody(res.body, outgoing);
}

async function pipeBody(body: ReadableStream<Uint8Array>, outgoing: ServerResponse): Promise<void> {
  const reader = body.getReader();
  let gone = false;
  let wake: (() => void) | undefined;
  const onClose = () => {
    gone = !outgoing.writableFinished;
    wake?.();
    if (gone) reader.cancel(new Error("the client closed the connection")).catch(() => undefined);
  };
  outgoing.once("close", onClose);
  outgoing.flushHeaders();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || gone) break;
      if (!outgoing.write(value)) {
        let stall: ReturnType<typeof setTimeout> | undefined;
        const drained = await new Promise<boolean>((resolve) => {
          wake = () => resolve(true);
          stall = setTimeout(() => resolve(false), env.STREAM_STALL_MS);
          outgoing.once("drain", wake);
        });
        clearTimeout(stall);
        outgoing.off("drain", wake!);
        wake = undefined;
        if (gone) break;
        if (!drained) {
          // The client has read nothing for STREAM_STALL_MS: it is gone as far as this answer is concerned. Closing
          // the connection is what frees what it holds here and tells the body's producer (its cancel).
          outgoing.destroy();
          break;
        }
      }
    }
    if (!gone) outgoing.end();
  } catch {
    // The producer failed after the headers went out: the client must not read a truncated body as whole.
    outgoing.destroy();
  } finally {
    outgoing.off("close", onClose);
  }
}
