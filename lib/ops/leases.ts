import "server-only";
import { hostname } from "node:os";
import { db } from "@/lib/db";
import { env } from "@/lib/env";

/** This instance's name in job_leases (and logs). */
export const INSTANCE_ID = env.INSTANCE_ID ?? `${hostname()}-${process.pid}`;

/**
 * Claims tick ⌊now / interval⌋ of a fleet-wide job: exactly one instance of those sharing the database wins each
 * tick (a conditional upsert that only moves the tick forward), so a job runs once per tick across the fleet, not
 * once per instance. The database's clock numbers the ticks, so instances with skewed clocks agree. Returns the
 * tick won, or null when another instance already has it.
 */
export async function claimJobTick(name: string, intervalMs: number, holder = INSTANCE_ID): Promise<bigint | null> {
  const rows = await db.$queryRaw<{ tick: bigint }[]>`
    INSERT INTO job_leases AS l (name, tick, holder, acquired_at, runs)
    VALUES (${name}, floor(extract(epoch FROM clock_timestamp()) * 1000 / ${intervalMs}::bigint)::bigint, ${holder}, clock_timestamp(), 1)
    ON CONFLICT (name) DO UPDATE SET tick = EXCLUDED.tick, holder = EXCLUDED.holder, acquired_at = EXCLUDED.acquired_at, runs = l.runs + 1
    WHERE l.tick < EXCLUDED.tick
    RETURNING tick`;
  return rows.length ? BigInt(rows[0].tick) : null;
}
