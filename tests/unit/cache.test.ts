import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Cache } from "@/lib/cache";
import { moduleCopy } from "../helpers/module-copy";

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

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a cache's loaded values (the market views)", () => {
  let cache: Cache<Promise<unknown>>;
  beforeEach(() => {
    cache = new Cache(1000);
  });

  /** A loader whose first load, made now, has answered `value`. */
  async function loaded(value: string) {
    const l = loader();
    const first = cache.load("k", TTL, l.load);
    await l.settle(0, value);
    await first;
    return l;
  }

  it("shares one load between concurrent misses, and answers the value until the last quarter of its life without loading", async () => {
    const l = loader();
    const first = cache.load("k", TTL, l.load);
    const second = cache.load("k", TTL, l.load);
    await l.settle(0, "v1");
    expect([await first, await second]).toEqual(["v1", "v1"]);
    vi.setSystemTime(740);
    expect(await cache.load("k", TTL, l.load)).toBe("v1");
    expect(l.load).toHaveBeenCalledTimes(1);
  });

  it("in the last quarter, answers the current value at once and loads the next one in the background, once", async () => {
    const l = await loaded("v1");
    vi.setSystemTime(800);
    // Answered without waiting for the refresh, which is still pending.
    expect(await cache.load("k", TTL, l.load)).toBe("v1");
    expect(await cache.load("k", TTL, l.load)).toBe("v1");
    expect(l.load).toHaveBeenCalledTimes(2);
    await l.settle(1, "v2");
    expect(await cache.load("k", TTL, l.load)).toBe("v2");
    // The new value is fresh from when its load started (800): it lasts until 1800, refreshing from 1550.
    vi.setSystemTime(1540);
    expect(await cache.load("k", TTL, l.load)).toBe("v2");
    expect(l.load).toHaveBeenCalledTimes(2);
    vi.setSystemTime(1800);
    const third = cache.load("k", TTL, l.load);
    expect(l.load).toHaveBeenCalledTimes(3);
    await l.settle(2, "v3");
    expect(await third).toBe("v3");
  });

  it("never answers a value past its TTL: a refresh still pending at expiry does not keep the old value alive", async () => {
    const l = await loaded("v1");
    vi.setSystemTime(900);
    expect(await cache.load("k", TTL, l.load)).toBe("v1"); // starts the refresh (load 1)
    vi.setSystemTime(1000);
    const miss = cache.load("k", TTL, l.load); // expired: a load of its own (load 2)
    expect(l.load).toHaveBeenCalledTimes(3);
    await l.settle(1, "late refresh");
    await l.settle(2, "v2");
    expect(await miss).toBe("v2");
    expect(await cache.load("k", TTL, l.load)).toBe("v2");
  });

  it("keeps the current value when a refresh fails, until it expires; a failed load is not cached", async () => {
    const l = await loaded("v1");
    vi.setSystemTime(800);
    expect(await cache.load("k", TTL, l.load)).toBe("v1");
    await l.settle(1, new Error("database down"));
    vi.setSystemTime(850);
    // The failed refresh is forgotten: this hit starts another.
    expect(await cache.load("k", TTL, l.load)).toBe("v1");
    expect(l.load).toHaveBeenCalledTimes(3);
    await l.settle(2, new Error("still down"));
    vi.setSystemTime(1000);
    const miss = cache.load("k", TTL, l.load);
    await l.settle(3, new Error("down"));
    await expect(miss).rejects.toThrow("down");
    const next = cache.load("k", TTL, l.load);
    expect(l.load).toHaveBeenCalledTimes(5);
    await l.settle(4, "back");
    expect(await next).toBe("back");
  });

  it("drops a refresh that lands after the cache was cleared", async () => {
    const l = await loaded("v1");
    vi.setSystemTime(800);
    await cache.load("k", TTL, l.load);
    cache.clear();
    await l.settle(1, "from before the clear");
    const after = cache.load("k", TTL, l.load);
    await l.settle(2, "after the clear");
    expect(await after).toBe("after the clear");
  });
});

describe("a cache's stored values (the API keys, the upstream keys)", () => {
  it("answers a value until its TTL after it was stored, never at or after it; one without a TTL until it is dropped", () => {
    const cache = new Cache<string>(10);
    cache.set("live", "a", TTL, 0);
    cache.set("kept", "b");
    expect(cache.get("live", 999)).toBe("a");
    expect(cache.get("live", 1000)).toBeUndefined();
    expect(cache.get("kept", Number.MAX_SAFE_INTEGER)).toBe("b");
    vi.setSystemTime(999); // the clock, when no time is given
    expect(cache.get("live")).toBe("a");
    vi.setSystemTime(1000);
    expect(cache.get("live")).toBeUndefined();
    cache.delete("kept");
    expect(cache.get("kept")).toBeUndefined();
    cache.set("again", "c");
    cache.clear();
    expect([cache.get("again"), cache.size]).toEqual([undefined, 0]);
  });

  it("holds at most its bound: a new key drops the expired entries first, then the one written longest ago", () => {
    const cache = new Cache<number>(3);
    cache.set("short", 1, 100, 0);
    cache.set("long", 2, 10_000, 0);
    cache.set("forever", 3);
    // At 200 "short" has expired: it makes the room, the live ones stay.
    cache.set("d", 4, 10_000, 200);
    expect([cache.size, cache.get("short", 200), cache.get("long", 200), cache.get("forever", 200), cache.get("d", 200)]).toEqual([
      3,
      undefined,
      2,
      3,
      4,
    ]);
    // Nothing has expired: the entry written longest ago goes, and writing a key again makes it the newest.
    cache.set("long", 20, 10_000, 300);
    cache.set("e", 5, 10_000, 300);
    expect([cache.size, cache.get("forever", 300), cache.get("long", 300), cache.get("d", 300), cache.get("e", 300)]).toEqual([
      3,
      undefined,
      20,
      4,
      5,
    ]);
    // Storing under a key the cache holds never drops another.
    cache.set("e", 6, 10_000, 400);
    expect([cache.size, cache.get("d", 400)]).toEqual([3, 4]);
  });

  it("finds an expired entry behind live ones written before it, each time one has expired since it last looked", () => {
    const cache = new Cache<number>(3);
    const live = (now: number) => ["long", "short", "mid", "d", "e", "f", "g"].filter((key) => cache.get(key, now) !== undefined);
    cache.set("long", 1, 10_000, 0);
    cache.set("short", 2, 100, 0);
    cache.set("mid", 3, 400, 0);
    cache.set("d", 4, 10_000, 200); // "short" expired at 100 and goes, not "long" (written first, still live)
    expect(live(200)).toEqual(["long", "mid", "d"]);
    cache.set("e", 5, 10_000, 500); // "mid" expired at 400 and goes
    expect(live(500)).toEqual(["long", "d", "e"]);
    cache.set("f", 6, 100, 600); // nothing has expired: "long", written first, goes
    expect(live(600)).toEqual(["d", "e", "f"]);
    cache.set("g", 7, 10_000, 800); // "f" expired at 700 and goes
    expect(live(800)).toEqual(["d", "e", "g"]);
    expect(cache.size).toBe(3);
  });

  it("counts loaded values against the same bound", async () => {
    const cache = new Cache<Promise<unknown>>(2);
    for (const key of ["a", "b", "c"]) await cache.load(key, TTL, async () => key);
    expect(cache.size).toBe(2);
    const reload = vi.fn(async () => "a again");
    expect(await cache.load("a", TTL, reload)).toBe("a again");
    expect(reload).toHaveBeenCalledTimes(1);
  });
});

describe("a process's named cache", () => {
  it("is one cache for every loaded copy of the module, as in the front door's host and Next's server bundle", async () => {
    const a = await moduleCopy(() => import("@/lib/cache"));
    const b = await moduleCopy(() => import("@/lib/cache"));
    expect(a).not.toBe(b);
    const name = `test-${Math.random()}`;
    a.processCache<string>(name, 10).set("k", "stored by one copy");
    expect(b.processCache<string>(name, 10).get("k")).toBe("stored by one copy");
    b.processCache<string>(name, 10).delete("k");
    expect(a.processCache<string>(name, 10).get("k")).toBeUndefined();
  });
});
