import "server-only";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { hearDatabaseErrors } from "@/lib/db/errors";
import { pgConfig, registerPool } from "@/lib/db/pools";
import { processState } from "@/lib/process-state";

/**
 * The hot path's own `pg` pool (lib/router/holds.ts): the completion path runs two statements per request and
 * Prisma's per-query cost was a quarter of the app's CPU there. Prisma (lib/db/client.ts) stays for everything else.
 * One pool per process, created on first use; it is process state (lib/process-state.ts), so
 * Next's dev reloads do not leak pools and both module graphs share it.
 * Three connections: group commit keeps at most one reservation and one clear statement in flight per process.
 * int8 (BigInt money) comes back as strings and is turned into bigint by the caller.
 */
const holder = processState<{ pool?: pg.Pool }>("pg-pool", () => ({}));

export function pgPool(): pg.Pool {
  if (holder.pool) return holder.pool;
  const pool = new pg.Pool({ ...pgConfig(), max: 3 });
  hearDatabaseErrors(pool, "hot-path");
  registerPool("hot_path", pool);
  return (holder.pool = pool);
}

/** Closes the pool if it was opened (tests and graceful shutdown). */
export async function closePgPool(): Promise<void> {
  const pool = holder.pool;
  holder.pool = undefined;
  await pool?.end();
}

const TAG = Symbol("svc.statementTag");
type TaggedClient = pg.PoolClient & { [TAG]?: string };

/**
 * Runs a named (prepared) statement on a pooled connection: parsed and planned once per connection. The name is
 * made unique per connection because the embedded database (scripts/pglite-server.ts) is one backend session behind
 * every connection of every process, where prepared statement names are shared; on PostgreSQL each connection has
 * its own anyway.
 */
export async function preparedQuery<R extends pg.QueryResultRow>(query: {
  name: string;
  text: string;
  values: unknown[];
}): Promise<pg.QueryResult<R>> {
  const client: TaggedClient = await pgPool().connect();
  client[TAG] ??= randomBytes(6).toString("hex");
  try {
    const result = await client.query<R>({ ...query, name: `${query.name}_${client[TAG]}` });
    client.release();
    return result;
  } catch (error) {
    // As pool.query does: a connection that failed a query is not reused (it may be broken or mid-protocol).
    client.release(error as Error);
    throw error;
  }
}
