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
  return { run, batches, releaseNext };
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

  it("runs each item of a batch the database refused on its own: only the bad one fails", async () => {
    const g = gated((items) => (items.includes(3) ? refused : null));
    const gc = new GroupCommit(g.run, { maxBatch: 100, maxInFlight: 1, isolatable: (e) => e === refused });
    const first = gc.submit(1);
    const batch = [2, 3, 4].map((i) => gc.submit(i).catch((e: unknown) => e));
    await g.releaseNext();
    await first;
    await g.releaseNext(); // [2, 3, 4] refused
    for (let i = 0; i < 3; i++) await g.releaseNext(); // each alone
    expect(g.batches).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
    expect(await Promise.all(batch)).toEqual([20, refused, 40]);
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
