import { describe, expect, it } from "vitest";
import { GroupCommit } from "@/lib/router/group-commit";

/** A runner whose batches are recorded and finish only when released. */
function gated(fail: (items: number[]) => Error | null = () => null) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const run = (items: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      batches.push(items);
      gates.push(() => {
        const error = fail(items);
        if (error) reject(error);
        else resolve(items.map((i) => i * 10));
      });
    });
  const releaseNext = async () => {
    gates.shift()!();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { run, batches, releaseNext, pending: () => gates.length };
}

const refused = Object.assign(new Error("refused"), { code: "22003" });

describe("group commit", () => {
  it("sends at once when idle, and groups what arrives while a batch is in flight into the next one", async () => {
    const g = gated();
    const gc = new GroupCommit(g.run, { maxBatch: 100, maxInFlight: 1, isolatable: () => true });
    const first = gc.submit(1);
    expect(g.batches).toEqual([[1]]);
    const rest = [2, 3, 4, 5].map((i) => gc.submit(i));
    expect(g.batches).toHaveLength(1);
    await g.releaseNext();
    expect(await first).toBe(10);
    expect(g.batches).toEqual([[1], [2, 3, 4, 5]]);
    await g.releaseNext();
    expect(await Promise.all(rest)).toEqual([20, 30, 40, 50]);
  });

  it("splits a batch the database refused in halves until the bad item fails alone: the others need no run each", async () => {
    const g = gated((items) => (items.includes(6) ? refused : null));
    const gc = new GroupCommit(g.run, { maxBatch: 100, maxInFlight: 1, isolatable: (e) => e === refused });
    const first = gc.submit(1);
    const batch = [2, 3, 4, 5, 6, 7, 8, 9].map((i) => gc.submit(i).catch((e: unknown) => e));
    expect(gc.queued).toBe(8);
    await g.releaseNext();
    await first;
    while (g.pending() > 0) await g.releaseNext();
    expect(g.batches).toEqual([[1], [2, 3, 4, 5, 6, 7, 8, 9], [2, 3, 4, 5], [6, 7, 8, 9], [6, 7], [6], [7], [8, 9]]);
    expect(await Promise.all(batch)).toEqual([20, 30, 40, 50, refused, 70, 80, 90]);
    // A batch of one the database refuses is that item's own error, never run again.
    const alone = gc.submit(6).catch((e: unknown) => e);
    await g.releaseNext();
    expect(await alone).toBe(refused);
    expect(g.batches).toHaveLength(9);
  });

  it("fails the whole batch on an error that does not prove nothing was committed", async () => {
    const lost = new Error("connection lost");
    const g = gated((items) => (items.length > 1 ? lost : null));
    const gc = new GroupCommit(g.run, { maxBatch: 100, maxInFlight: 1, isolatable: (e) => e === refused });
    const first = gc.submit(1);
    const batch = [2, 3].map((i) => gc.submit(i).catch((e: unknown) => e));
    await g.releaseNext();
    await first;
    await g.releaseNext();
    expect(await Promise.all(batch)).toEqual([lost, lost]);
    expect(g.batches).toEqual([[1], [2, 3]]);
  });
});
