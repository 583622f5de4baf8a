import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cached, clearMarketCache } from "@/lib/market/cache";

/** A loader whose loads are recorded and settle only when told. */
function loader() {
  const pending: { resolve: (v: string) => void; reject: (e: Error) => void }[] = [];
  const load = vi.fn(() => new Promise<string>((resolve, reject) => pending.push({ resolve, reject })));
  const settle = async (i: number, value: string | Error) => {
    if (value instanceof Error) pending[i].reject(value);
    else pending[i].resolve(value);
    await Promise.resolve();
    await Promise.resolve();
  };
  return { load, settle };
}

const TTL = 1000;

/** A loader whose first load, made now, has answered `value`. */
async function loaded(value: string) {
  const l = loader();
  const first = cached("k", TTL, l.load);
  await l.settle(0, value);
  await first;
  return l;
}

describe("the market cache", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(0);
    clearMarketCache();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("shares one load between concurrent misses, and answers the value until the last quarter of its life without loading", async () => {
    const l = loader();
    const first = cached("k", TTL, l.load);
    const second = cached("k", TTL, l.load);
    await l.settle(0, "v1");
    expect([await first, await second]).toEqual(["v1", "v1"]);
    vi.setSystemTime(740);
    expect(await cached("k", TTL, l.load)).toBe("v1");
    expect(l.load).toHaveBeenCalledTimes(1);
  });

  it("in the last quarter, answers the current value at once and loads the next one in the background, once", async () => {
    const l = await loaded("v1");
    vi.setSystemTime(800);
    // Answered without waiting for the refresh, which is still pending.
    expect(await cached("k", TTL, l.load)).toBe("v1");
    expect(await cached("k", TTL, l.load)).toBe("v1");
    expect(l.load).toHaveBeenCalledTimes(2);
    await l.settle(1, "v2");
    expect(await cached("k", TTL, l.load)).toBe("v2");
    // The new value is fresh from when its load started (800): it lasts until 1800, refreshing from 1550.
    vi.setSystemTime(1540);
    expect(await cached("k", TTL, l.load)).toBe("v2");
    expect(l.load).toHaveBeenCalledTimes(2);
    vi.setSystemTime(1800);
    const third = cached("k", TTL, l.load);
    expect(l.load).toHaveBeenCalledTimes(3);
    await l.settle(2, "v3");
    expect(await third).toBe("v3");
  });

  it("never answers a value past its TTL: a refresh still pending at expiry does not keep the old value alive", async () => {
    const l = await loaded("v1");
    vi.setSystemTime(900);
    expect(await cached("k", TTL, l.load)).toBe("v1"); // starts the refresh (load 1)
    vi.setSystemTime(1000);
    const miss = cached("k", TTL, l.load); // expired: a load of its own (load 2)
    expect(l.load).toHaveBeenCalledTimes(3);
    await l.settle(1, "late refresh");
    await l.settle(2, "v2");
    expect(await miss).toBe("v2");
    expect(await cached("k", TTL, l.load)).toBe("v2");
  });

  it("keeps the current value when a refresh fails, until it expires; a failed load is not cached", async () => {
    const l = await loaded("v1");
    vi.setSystemTime(800);
    expect(await cached("k", TTL, l.load)).toBe("v1");
    await l.settle(1, new Error("database down"));
    vi.setSystemTime(850);
    // The failed refresh is forgotten: this hit starts another.
    expect(await cached("k", TTL, l.load)).toBe("v1");
    expect(l.load).toHaveBeenCalledTimes(3);
    await l.settle(2, new Error("still down"));
    vi.setSystemTime(1000);
    const miss = cached("k", TTL, l.load);
    await l.settle(3, new Error("down"));
    await expect(miss).rejects.toThrow("down");
    const next = cached("k", TTL, l.load);
    expect(l.load).toHaveBeenCalledTimes(5);
    await l.settle(4, "back");
    expect(await next).toBe("back");
  });

  it("drops a refresh that lands after the cache was cleared", async () => {
    const l = await loaded("v1");
    vi.setSystemTime(800);
    await cached("k", TTL, l.load);
    clearMarketCache();
    await l.settle(1, "from before the clear");
    const after = cached("k", TTL, l.load);
    await l.settle(2, "after the clear");
    expect(await after).toBe("after the clear");
  });
});
