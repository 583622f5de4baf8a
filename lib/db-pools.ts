import "server-only";
import type { Pool } from "pg";

/**
 * Every `pg` pool this process opened, by name: lib/db.ts registers Prisma's ("prisma"), lib/db-pool.ts the hot
 * path's ("hot_path"), each when it opens it. Whoever reports on them (/metrics, lib/ops/metrics.ts) reads them
 * here, so the database modules import nothing of ops. On globalThis, like the pools themselves: Next's server
 * bundle and the process hosting it each load this module, and both must see the same pools.
 */
const KEY = Symbol.for("svc.dbPools");
const pools: Map<string, Pool> = ((globalThis as { [KEY]?: Map<string, Pool> })[KEY] ??= new Map());

export function registerPool(name: string, pool: Pool): void {
  pools.set(name, pool);
}

/** The pools opened so far, in the order they were opened. */
export function openPools(): ReadonlyMap<string, Pool> {
  return pools;
}
