import "server-only";
import type { Server, ServerResponse } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import { log } from "@/lib/log";
import { holdsInFlight, type RequestContext } from "@/lib/ops/request-context";
import { processState } from "@/lib/process-state";

/**
 * Graceful shutdown (server/main.ts on SIGTERM/SIGINT): stop accepting, let the requests in flight finish until
 * SHUTDOWN_GRACE_MS, then release the holds of those still unfinished and answer them 503 `shutting_down` (nothing
 * was charged: a released hold can no longer clear), then exit. Background jobs stop taking ticks at once.
 * The caller says how a hold is released and how a refused request is answered (lib/router/holds.ts and the front
 * door's refuseShuttingDown), so this knows neither the router nor HTTP.
 * Process state (lib/process-state.ts): the front door (host process) and the jobs (Next's bundle) each load this module.
 */
type Lifecycle = { draining: boolean; inFlight: Map<ServerResponse, RequestContext>; streams: Set<StreamStopper> };
const lifecycle = processState<Lifecycle>("lifecycle", () => ({ draining: false, inFlight: new Map(), streams: new Set() }));

/** Ends a live stream now and resolves once it has cleared (what it delivered billed, exactly once). */
export type StreamStopper = () => Promise<void>;

/** How long the streams still live at the drain deadline get to end and clear before their holds are released. */
export const STREAM_STOP_MS = 3_000;

/**
 * A live stream (lib/router/stream.ts) registers how to stop it: at the drain deadline it is ended and billed for what
 * it delivered, rather than released for nothing after its bytes went out. Returns the unregister function.
 */
export function registerStream(stop: StreamStopper): () => void {
  lifecycle.streams.add(stop);
  return () => lifecycle.streams.delete(stop);
}

export function isShuttingDown(): boolean {
  return lifecycle.draining;
}

/**
 * The front door registers every request it hands to the app, until its answer is finished, the answer closes, or
 * its connection closes: Node emits neither `finish` nor `close` on an answer still queued behind another on a
 * connection that died, so the socket's own `close` is what ends it there.
 */
export function trackRequest(res: ServerResponse, context: RequestContext): void {
  lifecycle.inFlight.set(res, context);
  const socket = res.req.socket;
  const done = () => {
    lifecycle.inFlight.delete(res);
    res.off("finish", done);
    res.off("close", done);
    socket.off("close", done);
  };
  res.once("finish", done);
  res.once("close", done);
  socket.once("close", done);
  if (socket.destroyed) done();
}

export function requestsInFlight(): number {
  return lifecycle.inFlight.size;
}

export type DrainReport = { finished: number; refused: number; releasedHolds: number; ms: number };

export async function drainServer(
  server: Server,
  options: {
    graceMs: number;
    releaseHold: (holdId: string) => Promise<boolean>;
    refuse: (res: ServerResponse, requestId?: string) => void;
  },
): Promise<DrainReport> {
  const started = Date.now();
  lifecycle.draining = true;
  const initially = lifecycle.inFlight.size;
  server.close();
  server.closeIdleConnections();
  log.info("shutting down: draining", { in_flight: initially, grace_ms: options.graceMs });

  const deadline = started + options.graceMs;
  while (lifecycle.inFlight.size > 0 && Date.now() < deadline) {
    await delay(25);
    server.closeIdleConnections();
  }

  // Streams still live are ended and cleared first (bounded): their holds are then no longer active to release.
  if (lifecycle.streams.size > 0) {
    log.info("shutting down: ending live streams", { streams: lifecycle.streams.size });
    await Promise.race([Promise.allSettled([...lifecycle.streams].map((stop) => stop())), delay(STREAM_STOP_MS)]);
  }
  let refused = 0;
  let releasedHolds = 0;
  const settling: Promise<void>[] = [];
  for (const [res, context] of [...lifecycle.inFlight]) {
    settling.push(
      (async () => {
        // A hold that can no longer be released was cleared just now: that request is answering 200; let it.
        let cleared = false;
        for (const holdId of [...context.holds]) {
          if (await options.releaseHold(holdId).catch(() => false)) releasedHolds++;
          else cleared = true;
        }
        if (!cleared && !res.headersSent) {
          refused++;
          options.refuse(res, context.requestId);
        }
      })(),
    );
  }
  await Promise.all(settling);
  const last = Date.now() + 2_000;
  while (lifecycle.inFlight.size > 0 && Date.now() < last) await delay(25);
  // Anything reserved since (a request that was between reading and reserving) is released too.
  for (const holdId of holdsInFlight()) if (await options.releaseHold(holdId).catch(() => false)) releasedHolds++;
  server.closeAllConnections();
  const report = { finished: initially - refused, refused, releasedHolds, ms: Date.now() - started };
  log.info("shut down", report);
  return report;
}

/**
 * How long past the grace a stopping process may take to release the holds left, close and exit: the release is a
 * statement per request still in flight, then up to 2 s for their answers, then the database and Next close.
 */
export const EXIT_MARGIN_MS = 5_000 + STREAM_STOP_MS;

export type ExitOptions = {
  graceMs: number;
  releaseHold: (holdId: string) => Promise<boolean>;
  refuse: (res: ServerResponse, requestId?: string) => void;
  /** What to close once drained (Next, the database pool); the process exits 0 once it settles. */
  close: () => Promise<unknown>;
  /** Where the lines an operator reads go (the server's stdout). */
  say: (line: string) => void;
};

/**
 * SIGTERM (or SIGINT) ends the process within the drain window: it drains (drainServer), closes, and exits 0; whatever
 * hangs on the way (a database that answers no release, a close that never settles), a timer set when the signal is
 * handled exits 1 at graceMs + EXIT_MARGIN_MS. The handler and the timer run on the event loop, so they run in time
 * only while no request holds it long: what a request can cost before any handler runs is bounded per byte
 * (lib/json-limits.ts, lib/http/body.ts), and the tokenizer works in slices (lib/upstream/tokens.ts).
 */
export function exitOnSignals(server: Server, options: ExitOptions): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    options.say(`${signal}: draining (up to ${options.graceMs} ms for requests in flight)`);
    setTimeout(() => {
      options.say(`not stopped within ${options.graceMs + EXIT_MARGIN_MS} ms: exiting`);
      process.exit(1);
    }, options.graceMs + EXIT_MARGIN_MS).unref();
    void drainServer(server, options)
      .then((report) =>
        options.say(`stopped: ${report.finished} finished, ${report.refused} refused, ${report.releasedHolds} holds released`),
      )
      .catch((error: unknown) => log.error("shutdown failed", { error }))
      .finally(() => void Promise.allSettled([options.close()]).finally(() => process.exit(0)));
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
}
