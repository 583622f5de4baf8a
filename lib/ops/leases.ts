import "server-only";
import { hostname } from "node:os";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";

/** This instance's name in job_leases (and logs). */
export const INSTANCE_ID = env.INSTANCE_ID ?? `${hostname()}-${process.pid}`;

/**
 * Claims the current run of a fleet-wide job: exactly one instance of those sharing the database wins each tick
 * window, so a job runs once per tick across the fleet, not once per instance. The claimer's window is
 * [⌊now / interval⌋ × interval, the next multiple), by its own interval and the database's clock (instances with
 * skewed clocks agree); the lease row keeps that window's end, and the next claim is possible once it has passed.
 *
 * The lease depends on no interval but the claimer's: instances with different intervals (a JOBS_INTERVAL_MS
 * override, a rolling deploy that changes one) each claim once the last window has ended, and none can move the
 * lease out of another's reach (the old scheme compared tick numbers, and a shorter interval's larger number blocked
 * every other instance for good). Returns the end of the window won, or null when another instance holds it.
 */
export async function claimJobTick(name: string, intervalMs: number, holder = INSTANCE_ID): Promise<Date | null> {
  // `now` is truncated to the column's milliseconds, never rounded up past the end of a window.
  const rows = await db.$queryRaw<{ expires_at: Date }[]>`
    WITH clock AS (SELECT date_trunc('milliseconds', clock_timestamp()) AS now),
    claim AS (SELECT now, floor(extract(epoch FROM now) * 1000 / ${intervalMs}::bigint)::bigint AS tick FROM clock)
    INSERT INTO job_leases AS l (name, tick, holder, acquired_at, expires_at, runs)
    SELECT ${name}, c.tick, ${holder}, c.now, to_timestamp((c.tick + 1) * ${intervalMs}::bigint / 1000.0), 1 FROM claim c
    ON CONFLICT (name) DO UPDATE SET
      tick = EXCLUDED.tick, holder = EXCLUDED.holder, acquired_at = EXCLUDED.acquired_at,
      expires_at = EXCLUDED.expires_at, runs = l.runs + 1
    WHERE l.expires_at <= EXCLUDED.acquired_at
    RETURNING expires_at`;
  return rows.length ? new Date(rows[0].expires_at) : null;
}
