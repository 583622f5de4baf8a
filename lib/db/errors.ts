import "server-only";
import type pg from "pg";
import { log } from "@/lib/log";

/**
 * Whether an error means the database could not be reached or dropped the connection (a restart, a failover, a
 * full connection table), as opposed to a statement it refused. Such a request is answered 503
 * `service_unavailable` with Retry-After (lib/http/route.ts), never 500: it is temporary and says nothing about
 * the request.
 *
 * The shapes it recognizes, from the two clients the app uses: `pg` (the hot path's pool, lib/db/pool.ts) throws
 * the server's own error with its SQLSTATE, or a plain Error ("Connection terminated unexpectedly", a pool's connect
 * timeout) or a socket error; Prisma through @prisma/adapter-pg throws its P1xxx connection codes, or carries the
 * adapter's error kind in `meta.driverAdapterError`. Causes are followed a few levels down.
 */
const UNAVAILABLE_SQLSTATES = new Set([
  "57P01", // admin_shutdown: the server is restarting or the backend was terminated
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: starting up, shutting down, in recovery
  "53300", // too_many_connections
  "58030", // io_error
]);
/** Prisma's connection errors: can't reach, timed out, closed, pool timeout, too many connections. */
const UNAVAILABLE_PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2037"]);
const UNAVAILABLE_ADAPTER_KINDS = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
  "TlsConnectionError",
]);
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);
const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^terminating connection due to/,
  /^the database system is (starting up|shutting down|in recovery mode)$/,
];

type Inspectable = { code?: unknown; message?: unknown; cause?: unknown; meta?: unknown; kind?: unknown; originalCode?: unknown };

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 4 || typeof error !== "object" || error === null) return false;
  const e = error as Inspectable;
  const code = typeof e.code === "string" ? e.code : undefined;
  if (code && (UNAVAILABLE_PRISMA_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith("08"))) return true;
  // pg throws a failed connect as is; deeper down, a socket error belongs to something else (an RPC's fetch).
  if (depth === 0 && code && SOCKET_CODES.has(code) && "syscall" in e) return true;
  if (typeof e.kind === "string" && UNAVAILABLE_ADAPTER_KINDS.has(e.kind)) return true;
  if (e.kind === "postgres" && typeof e.originalCode === "string" && isUnavailableSqlState(e.originalCode)) return true;
  if (error instanceof Error && PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(error.message))) return true;
  const adapterError = (e.meta as { driverAdapterError?: unknown } | undefined)?.driverAdapterError;
  return isDatabaseUnavailable(adapterError, depth + 1) || isDatabaseUnavailable(e.cause, depth + 1);
}

function isUnavailableSqlState(code: string): boolean {
  return UNAVAILABLE_SQLSTATES.has(code) || code.startsWith("08");
}

/**
 * Makes every connection error of a pool heard. A connection the server drops (a restart, a failover) emits 'error'
 * on its pg Client; the pool listens only while the client is idle, so a drop noticed while it is checked out (or
 * between a checkout and its query) was an unhandled 'error' event that crashed the process. The query in flight,
 * if any, gets the error as its own rejection; the pool discards the broken connection and opens a new one.
 */
export function hearDatabaseErrors(pool: pg.Pool, name: string): void {
  pool.on("error", (error) => log.warn("idle database connection failed", { pool: name, error: error.message }));
  pool.on("connect", (client) => {
    client.on("error", (error) => log.debug("database connection failed", { pool: name, error: error.message }));
  });
}
