import "server-only";
import type { ClientConfig, Pool } from "pg";
import { requireDatabaseUrl } from "@/lib/env";
import { processState } from "@/lib/process-state";

/**
 * How every connection of the app's opens: on DATABASE_URL, its session in UTC. The driver sends a JS Date as a
 * timestamp without a zone, which PostgreSQL reads in the session's TimeZone, so on a server whose default is not
 * UTC every `${date}` in a raw query (a range bound, a bucket's start) would move by the offset. The UTC days the
 * market and the ledger are kept in need the same. Set at startup (`-c TimeZone=UTC`): no statement, no round trip.
 * The embedded database (PGlite) ignores startup options and is always on GMT.
 */
export function pgConfig(): ClientConfig {
  return { connectionString: requireDatabaseUrl(), options: "-c TimeZone=UTC" };
}

/**
 * Every `pg` pool this process opened, by name: lib/db/client.ts registers Prisma's ("prisma"), lib/db/pool.ts the hot
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
