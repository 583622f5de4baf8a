import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { db } from "@/lib/db/client";
import { claimJobTick } from "@/lib/ops/leases";

/** A job name no other test (or background job) uses. */
const jobName = () => `test-job-${randomUUID().slice(0, 8)}`;

/** Waits until the database's clock has passed `instant` (what a lease's expiry is compared with). */
async function untilDatabasePasses(instant: Date) {
  for (;;) {
    const [{ now }] = await db.$queryRaw<{ now: Date }[]>`SELECT clock_timestamp() AS now`;
    if (now.getTime() > instant.getTime()) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(50, instant.getTime() - now.getTime() + 1)));
  }
}

describe("fleet-wide job leases", () => {
  it("one instance wins a tick window; the others skip it", async () => {
    const name = jobName();
    const won = await claimJobTick(name, 60_000, "instance-a");
    expect(won).toBeInstanceOf(Date);
    expect(await claimJobTick(name, 60_000, "instance-b")).toBeNull();
    expect(await claimJobTick(name, 60_000, "instance-a")).toBeNull();
    const [row] = await db.$queryRaw<{ holder: string; runs: bigint }[]>`SELECT holder, runs FROM job_leases WHERE name = ${name}`;
    expect(row).toMatchObject({ holder: "instance-a", runs: 1n });
  });

  it("a lease ends with its window: the next window is claimed once", async () => {
    const name = jobName();
    const first = await claimJobTick(name, 200, "instance-a");
    expect(first).not.toBeNull();
    await untilDatabasePasses(first!);
    const claims = await Promise.all(["a", "b", "c"].map((id) => claimJobTick(name, 200, `instance-${id}`)));
    expect(claims.filter((c) => c !== null)).toHaveLength(1);
  });

  it("an instance with a shorter interval never locks out the instances with the default one", async () => {
    // The bug: a tick number stored from a 50 ms interval is far past any 15 s tick, so no default instance ever
    // won again and no job ran fleet-wide (the hold sweeper included) until the rows were deleted.
    const name = jobName();
    const short = await claimJobTick(name, 50, "instance-with-override");
    expect(short).not.toBeNull();
    await untilDatabasePasses(short!);
    const regular = await claimJobTick(name, 15_000, "instance-default");
    expect(regular).not.toBeNull();
    // …and the default instance's window now holds for the override instance too, until it ends.
    expect(await claimJobTick(name, 50, "instance-with-override")).toBeNull();
  });

  it("an instance with a longer interval holds the lease no longer than its own window", async () => {
    const name = jobName();
    const [{ now }] = await db.$queryRaw<{ now: Date }[]>`SELECT clock_timestamp() AS now`;
    const long = await claimJobTick(name, 3_600_000, "instance-hourly");
    expect(long).not.toBeNull();
    expect(long!.getTime()).toBeGreaterThan(now.getTime());
    expect(long!.getTime() - now.getTime()).toBeLessThanOrEqual(3_600_000);
    expect(await claimJobTick(name, 1_000, "instance-fast")).toBeNull();
    // Once that window has passed (moved here rather than waited for), the fast instance claims again.
    await db.$executeRaw`UPDATE job_leases SET expires_at = clock_timestamp() - interval '1 millisecond' WHERE name = ${name}`;
    expect(await claimJobTick(name, 1_000, "instance-fast")).not.toBeNull();
  });
});
