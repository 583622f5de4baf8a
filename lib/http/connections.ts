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
 * - A cap per client (capConnectionsPerPeer, admitPerForwardedClient). Without trusted proxies (TRUST_PROXY_HOPS=0) the
 *   socket peer is the client, and its open connections are capped: beyond it a new connection gets 429 and is
 *   closed. Behind trusted proxies a connection is a balancer's and carries many clients' requests one after another,
 *   so the client is the forwarded address (lib/http/client-ip.ts's rule, as the rate limits read it) and what is
 *   capped is its requests in flight (429 for one too many; the balancer's connection stays open); the balancer's
 *   own connections get a separate, larger cap per socket peer. Refusals are logged once a minute, not once each.
 * - Lingering close (closeLingering), as nginx's lingering_close: an answer that closes its connection while the
 *   client may still be sending (an early 401 or 413 before the body is read, a refused connection, a 503 while
 *   draining) is followed by a FIN, then whatever the client still sends is read and discarded, at most
 *   lingerMaxBytes for at most lingerMs, before the socket is closed. Closing at once with unread bytes makes the
 *   kernel reset the connection, and a client still writing its body then gets EPIPE or ECONNRESET, not its answer
 *   (a 5 MB body over the limit read its 413 in 3 of 10 tries in the review, 6 of 10 on loopback here). A refused
 *   connection lingers only while its address has fewer than its cap of them lingering, so refusals hold no more.
 */
import "server-only";
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { forwardedClientIp } from "@/lib/http/client-ip";
import { errorBody } from "@/lib/http/errors";
import { log } from "@/lib/log";

/** Parsed requests that may wait behind the one being answered on a connection (pipelining); beyond it: closed. */
export const MAX_PIPELINED = 16;

export type ConnectionLimits = {
  keepAliveTimeoutMs: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Proxies of ours in front that append to X-Forwarded-For (TRUST_PROXY_HOPS); 0: the socket peer is the client. */
  trustedProxyHops: number;
  /** Per client (0: no cap): open connections per socket peer without trusted proxies, else requests in flight per forwarded client. */
  maxConnectionsPerClient: number;
  /** Behind trusted proxies: open connections per socket peer address (the proxies' own); 0: no cap. */
  maxConnectionsPerProxy: number;
  maxPipelined: number;
  /** Lingering close: bytes read and discarded at most, and for how long at most, after a closing answer (0: none). */
  lingerMaxBytes: number;
  lingerMs: number;
};

export function connectionLimits(overrides: Partial<ConnectionLimits> = {}): ConnectionLimits {
  return {
    keepAliveTimeoutMs: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
    trustedProxyHops: env.TRUST_PROXY_HOPS,
    maxConnectionsPerClient: env.HTTP_MAX_CONNECTIONS_PER_CLIENT,
    maxConnectionsPerProxy: env.HTTP_MAX_CONNECTIONS_PER_PROXY,
    maxPipelined: MAX_PIPELINED,
    lingerMaxBytes: env.HTTP_LINGER_MAX_BYTES,
    lingerMs: env.HTTP_LINGER_TIMEOUT_MS,
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
type HttpSocket = Socket & {
  _paused?: boolean;
  parser?: { pause(): void; resume(): void } | null;
  _handle?: { reading?: boolean; readStart(): number } | null;
};

function holdReading(socket: HttpSocket) {
  socket._paused = true;
  socket.pause();
}

function releaseReading(socket: HttpSocket) {
  if (!socket._paused) return;
  socket._paused = false;
  socket.parser?.resume();
}

/**
 * Limits the open connections of each socket peer address: the client's own without trusted proxies, a proxy's
 * (maxConnectionsPerProxy) behind them. The ones beyond it are answered 429 and closed.
 */
export function capConnectionsPerPeer(server: Server, limits: ConnectionLimits): void {
  const behindProxies = limits.trustedProxyHops > 0;
  const cap = behindProxies ? limits.maxConnectionsPerProxy : limits.maxConnectionsPerClient;
  if (cap <= 0) return;
  const open = new Map<string, number>();
  const lingeringRefusals = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const peer = socket.remoteAddress;
    if (!peer) return;
    const count = open.get(peer) ?? 0;
    if (count < cap) return countWhileOpen(open, peer, socket);
    // A refused connection lingers (its client may be sending a body) only while its peer has fewer than `cap` of them
    // lingering: past that, a flood of refused connections would hold the sockets the cap is there to bound.
    const linger = (lingeringRefusals.get(peer) ?? 0) < cap;
    if (linger) countWhileOpen(lingeringRefusals, peer, socket);
    refuseConnection(socket, cap, behindProxies, linger);
  });
}

function countWhileOpen(counts: Map<string, number>, peer: string, socket: Socket) {
  counts.set(peer, (counts.get(peer) ?? 0) + 1);
  socket.once("close", () => {
    const left = (counts.get(peer) ?? 1) - 1;
    if (left > 0) counts.set(peer, left);
    else counts.delete(peer);
  });
}

function refuseConnection(socket: Socket, cap: number, proxy: boolean, linger: boolean) {
  // No request of this connection is served (one parsed before it closes is left unanswered).
  turnsOf(socket).closed = true;
  (proxy ? refusals.proxyConnections : refusals.connections)({ peer: socket.remoteAddress, max_connections: cap });
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
  socket.write(`${head.join("\r\n")}\r\n\r\n${body}`);
  closeLingering(socket, linger ? undefined : NO_LINGER);
}

/** Admits a request, or says why it is one too many (the caller answers it); see admitPerForwardedClient. */
export type ClientAdmission = (req: IncomingMessage, res: ServerResponse) => AppError | undefined;

/**
 * Behind trusted proxies, the per-client bound: requests in flight per forwarded client address, counted from the
 * front door's admission until the answer is finished or its connection closes. Without trusted proxies every request
 * is admitted here (the connection cap is the bound). Call it once X-Forwarded-For has the socket peer appended.
 */
export function admitPerForwardedClient(limits: ConnectionLimits): ClientAdmission {
  const { trustedProxyHops: hops, maxConnectionsPerClient: cap } = limits;
  if (hops <= 0 || cap <= 0) return () => undefined;
  const inFlight = new Map<string, number>();
  return (req, res) => {
    const client = forwardedClientIp(req.headers["x-forwarded-for"], hops);
    const count = inFlight.get(client) ?? 0;
    if (count >= cap) {
      refusals.requests({ client, max_requests_in_flight: cap });
      return new AppError(
        "rate_limited",
        `Too many requests in flight from your address (at most ${cap} at once): wait for some to finish.`,
        { headers: { "retry-after": "1" }, details: { limit: cap, scope: "requests in flight" } },
      );
    }
    inFlight.set(client, count + 1);
    const socket = req.socket;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      res.off("finish", finish);
      res.off("close", finish);
      socket.off("close", finish);
      const left = (inFlight.get(client) ?? 1) - 1;
      if (left > 0) inFlight.set(client, left);
      else inFlight.delete(client);
    };
    // Node emits neither on an answer whose connection died first (lib/ops/shutdown.ts): the socket's close ends it there.
    res.once("finish", finish);
    res.once("close", finish);
    socket.once("close", finish);
    return undefined;
  };
}

type LingerBounds = { maxBytes: number; ms: number };
const NO_LINGER: LingerBounds = { maxBytes: 0, ms: 0 };
const lingerBounds = new WeakMap<Socket, LingerBounds>();
const lingering = new WeakSet<Socket>();

/**
 * Every connection of the server closes lingering (closeLingering) where node:http would close it once its answer is
 * out: for an answer with `Connection: close` (or to a client that asked for it) node:http calls the socket's
 * destroySoon(), which ends it and destroys it as soon as the answer is flushed, unread bytes or not.
 */
export function closeConnectionsLingering(server: Server, limits: ConnectionLimits): void {
  const bounds = { maxBytes: limits.lingerMaxBytes, ms: limits.lingerMs };
  server.on("connection", (socket: Socket) => {
    lingerBounds.set(socket, bounds);
    socket.destroySoon = () => closeLingering(socket);
  });
}

/**
 * Closes a connection after the answer written to it: a FIN once the answer is out, then what the client still sends
 * is read and discarded (no request on it is parsed or served any more) until the client closes its side, at most the
 * socket's bounds in bytes and time; then the socket is destroyed. Where the client had closed its side already, or
 * the bounds are 0, it closes as node:http does: once the answer is flushed. The bounds are the server's
 * (closeConnectionsLingering) unless given.
 */
export function closeLingering(socket: Socket, bounds?: LingerBounds): void {
  if (lingering.has(socket) || socket.destroyed) return;
  lingering.add(socket);
  turnsOf(socket).closed = true;
  const { maxBytes, ms } = bounds ?? lingerBounds.get(socket) ?? { maxBytes: env.HTTP_LINGER_MAX_BYTES, ms: env.HTTP_LINGER_TIMEOUT_MS };
  const destroyOnceSent = () => {
    if (socket.writableFinished) socket.destroy();
    else socket.once("finish", () => socket.destroy());
  };
  socket.end();
  if (socket.readableEnded || maxBytes <= 0 || ms <= 0) return destroyOnceSent();
  const timer = setTimeout(() => socket.destroy(), ms);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
  // node:http's parser reads the socket through its own 'data' listener (or straight from the handle, which adding a
  // 'data' listener undoes): without it, the bytes are only counted and dropped.
  socket.removeAllListeners("data");
  let drained = 0;
  socket.on("data", (chunk: Buffer) => {
    drained += chunk.byteLength;
    if (drained > maxBytes) socket.destroy();
  });
  socket.once("end", destroyOnceSent);
  socket.resume();
  // While the parser consumed the handle, a read the stream asked for never came back, so resume() alone does not
  // start reading again: start the handle as node:http's own resume does (onSocketResume).
  const handle = (socket as HttpSocket)._handle;
  if (handle && !handle.reading) {
    handle.reading = true;
    handle.readStart();
  }
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
  proxyConnections: oncePerInterval("connections refused: too many open from one proxy (HTTP_MAX_CONNECTIONS_PER_PROXY)"),
  requests: oncePerInterval("requests refused: too many in flight from one client behind the proxies"),
  pipelined: oncePerInterval("connection closed: too many pipelined requests"),
};
