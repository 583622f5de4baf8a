/**
 * What one client connection may make the server hold, set once where the server is created (lib/http/front-door.ts,
 * createFrontDoorServer). Node's defaults let a stranger hold memory and sockets without bound: every pipelined
 * request on a connection is handed to the app at once and its answer buffered until the client reads (one
 * connection pipelining 1,500 GET /openapi.json without reading took the process from 312 MB to 1,148 MB), and a
 * socket that never sends a byte stays open for 60 s plus a 30 s check interval. Here:
 *
 * - One request at a time per connection (serveInTurn): the next pipelined request reaches the app only once the
 *   answer before it is finished and the socket has drained what it buffered, so a client that never reads holds
 *   at most one answer. Reading stops meanwhile (the request's own body still flows when the app reads it), so
 *   further pipelined requests wait in the kernel, not in memory; those already read with the one before (one read,
 *   64 KB at most) are parsed, and beyond MAX_PIPELINED of them waiting the connection is closed. A waiting request
 *   whose body has not arrived whole is bounded by the request timeout like any other.
 * - Timeouts (serverTimeouts): keep-alive (announced in `Keep-Alive: timeout=…`), the headers of a request (and the
 *   first byte of a new connection), a whole request; checked every second at most.
 * - A cap on open connections per socket peer address (capConnectionsPerClient): beyond it a new connection gets
 *   429 and is closed; refusals are logged once a minute, not once each.
 */
import "server-only";
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { errorBody } from "@/lib/http/errors";
import { log } from "@/lib/log";

/** Parsed requests that may wait behind the one being answered on a connection (pipelining); beyond it: closed. */
export const MAX_PIPELINED = 16;

export type ConnectionLimits = {
  keepAliveTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Open connections per socket peer address; 0: no cap. */
  maxConnectionsPerClient: number;
  maxPipelined: number;
};

export function connectionLimits(overrides: Partial<ConnectionLimits> = {}): ConnectionLimits {
  return {
    keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
    maxConnectionsPerClient: env.HTTP_MAX_CONNECTIONS_PER_CLIENT,
    maxPipelined: MAX_PIPELINED,
    ...overrides,
  };
}

/**
 * node:http's own timeouts, set deliberately. The headers timeout runs from a connection's start until its first
 * request's headers are complete (and from each later request's first byte), so it is also how long a socket that
 * sends nothing stays open; Node checks it every `connectionsCheckingInterval`, kept well below it.
 */
export function serverTimeouts(limits: ConnectionLimits): ServerOptions {
  return {
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs),
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

type Turns = { busy: boolean; waiting: (() => void)[]; closed: boolean };
const turns = new WeakMap<Socket, Turns>();

function turnsOf(socket: Socket): Turns {
  let connection = turns.get(socket);
  if (!connection) {
    const created: Turns = { busy: false, waiting: [], closed: false };
    turns.set(socket, created);
    socket.once("close", () => {
      created.closed = true;
      created.waiting.length = 0;
    });
    connection = created;
  }
  return connection;
}

/**
 * Runs `serve` for this request when it is its connection's turn: at once when nothing else on the connection is
 * being answered, else after the answers before it. Requests parsed beyond `maxPipelined` waiting ones close the
 * connection (they and the ones waiting are never served).
 */
export function serveInTurn(req: IncomingMessage, res: ServerResponse, serve: () => void, maxPipelined: number): void {
  const socket = req.socket;
  const connection = turnsOf(socket);
  if (connection.closed) return;
  if (!connection.busy) return take(connection, socket, res, serve);
  if (connection.waiting.length >= maxPipelined) {
    connection.closed = true;
    connection.waiting.length = 0;
    refusals.pipelined({ peer: socket.remoteAddress, max_pipelined: maxPipelined });
    socket.destroy();
    return;
  }
  // The request before this one has been read whole (this one was parsed after it): stop reading for good.
  holdReading(socket);
  connection.waiting.push(() => take(connection, socket, res, serve));
}

function take(connection: Turns, socket: Socket, res: ServerResponse, serve: () => void) {
  connection.busy = true;
  // Nothing more is read until this answer is out, but this request's own body: reading it resumes the socket
  // (Node's IncomingMessage does that unless the socket is held), and a request parsed meanwhile waits its turn.
  releaseReading(socket);
  socket.pause();
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    res.off("finish", release);
    res.off("close", release);
    const proceed = () => {
      connection.busy = false;
      if (connection.closed || socket.destroyed) return;
      const next = connection.waiting.shift();
      if (next) return next();
      releaseReading(socket);
      socket.resume();
    };
    // `finish` means the answer is in the socket's buffer; a client that does not read keeps it there.
    if (socket.writableNeedDrain) socket.once("drain", proceed);
    else proceed();
  };
  res.once("finish", release);
  res.once("close", release);
  serve();
}

/**
 * node:http's own backpressure flag (`_paused`, and its parser's pause), as its server sets it when answers pile up:
 * unlike a bare pause(), a resume that Node schedules (an IncomingMessage asking for data) cannot undo it.
 */
type HttpSocket = Socket & { _paused?: boolean; parser?: { pause(): void; resume(): void } | null };

function holdReading(socket: HttpSocket) {
  socket._paused = true;
  socket.pause();
}

function releaseReading(socket: HttpSocket) {
  if (!socket._paused) return;
  socket._paused = false;
  socket.parser?.resume();
}

/** Limits the open connections of each socket peer address; the ones beyond it are answered 429 and closed. */
export function capConnectionsPerClient(server: Server, cap: number): void {
  if (cap <= 0) return;
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const peer = socket.remoteAddress;
    if (!peer) return;
    const count = open.get(peer) ?? 0;
    if (count >= cap) return refuseConnection(socket, cap);
    open.set(peer, count + 1);
    socket.once("close", () => {
      const left = (open.get(peer) ?? 1) - 1;
      if (left > 0) open.set(peer, left);
      else open.delete(peer);
    });
  });
}

function refuseConnection(socket: Socket, cap: number) {
  // No request of this connection is served (one parsed before it closes is left unanswered).
  turnsOf(socket).closed = true;
  refusals.connections({ peer: socket.remoteAddress, max_connections_per_client: cap });
  const error = new AppError("rate_limited", `Too many open connections from your address (at most ${cap}): reuse or close some.`, {
    details: { limit: cap, scope: "connections" },
  });
  const body = JSON.stringify(errorBody(error));
  const head = [
    "HTTP/1.1 429 Too Many Requests",
    "content-type: application/json; charset=utf-8",
    `content-length: ${Buffer.byteLength(body)}`,
    "retry-after: 1",
    "cache-control: no-store",
    "connection: close",
  ];
  socket.once("finish", () => socket.destroy());
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
}

/** A warning at most once per interval, with how many times it happened since the last line. */
function oncePerInterval(message: string, intervalMs = 60_000) {
  let lastAt = Number.NEGATIVE_INFINITY;
  let count = 0;
  return (fields: Record<string, unknown>) => {
    count++;
    const now = Date.now();
    if (now - lastAt < intervalMs) return;
    lastAt = now;
    log.warn(message, { ...fields, since_last_line: count, interval_ms: intervalMs });
    count = 0;
  };
}

const refusals = {
  connections: oncePerInterval("connections refused: too many open from one address"),
  pipelined: oncePerInterval("connection closed: too many pipelined requests"),
};
