import "server-only";
import type { Pool } from "pg";
import { processState } from "@/lib/process-state";

/**
 * Every `pg` pool this process opened, by name: lib/db.ts registers Prisma's ("prisma"), lib/db-pool.ts the hot
 * path's ("hot_path"), each when it opens it. Whoever reports on them (/metrics, lib/ops/metrics.ts) reads them
 * here, so the database modules import nothing of ops. Process state (lib/process-state.ts), like the pools
 * themselves: both module graphs must see the same pools.
 */
const pools = processState("db-pools", () => new Map<string, Pool>());

export function registerPool(name: string, pool: Pool): void {
  pools.set(name, pool);
}

/** The pools opened so far, in the order they were opened. */
export function openPools(): ReadonlyMap<string, Pool> {
  return pools;
}
