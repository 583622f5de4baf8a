import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import { processState } from "@/lib/process-state";

/**
 * What this process knows about the request it is serving, across the layers that never pass it along: the front
 * door opens the context, route() fills in the request id and the account, the hot path's hold wrappers record the
 * holds it took (so a shutdown can release what an unfinished request still holds), and the upstream client reads
 * the request id to send the same X-Request-Id upstream. Process state (lib/process-state.ts): Next's server bundle
 * and the process hosting it (server/main.ts) load their own copies of this module, and both must see one store.
 */
export type RequestContext = {
  /** performance.now() when the request was taken (a completion's total latency is counted from here). */
  startedAt: number;
  requestId?: string;
  accountId?: string;
  /** Holds taken by this request and not yet cleared or released. */
  holds: Set<string>;
  /** The offer the request was routed to (upstream metrics are labelled by it). */
  offerId?: string;
  /** The error code of an error answer (route() sets it; metrics count errors by code). */
  errorCode?: string;
};

type Shared = { storage: AsyncLocalStorage<RequestContext>; holds: Set<string> };
const shared = processState<Shared>("request-context", () => ({ storage: new AsyncLocalStorage(), holds: new Set() }));

export function newRequestContext(): RequestContext {
  return { startedAt: performance.now(), holds: new Set() };
}

export function runInRequestContext<T>(context: RequestContext, fn: () => T): T {
  return shared.storage.run(context, fn);
}

export function currentRequestContext(): RequestContext | undefined {
  return shared.storage.getStore();
}

/** A hold this process took (lib/router/holds.ts calls this once the reservation succeeded). */
export function trackHold(holdId: string, offerId?: string): void {
  shared.holds.add(holdId);
  const context = currentRequestContext();
  if (context) {
    context.holds.add(holdId);
    context.offerId = offerId ?? context.offerId;
  }
}

/** The hold was cleared or released. */
export function untrackHold(holdId: string): void {
  shared.holds.delete(holdId);
  currentRequestContext()?.holds.delete(holdId);
}

/** Holds this process took and has not settled yet (the metrics' holds-in-flight gauge, shutdown). */
export function holdsInFlight(): string[] {
  return [...shared.holds];
}
