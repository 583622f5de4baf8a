/**
 * The notification area's store (components/ui/notifications.tsx) as useSyncExternalStore reads it: React compares two
 * calls of each snapshot function and logs "The result of getServerSnapshot should be cached" on every page load when
 * they differ (#38), and re-renders for ever when getSnapshot's do.
 */
import { describe, expect, it } from "vitest";
import { currentNotices, dismissNotice, notify, serverNotices } from "@/components/ui/notifications";

describe("notification snapshots", () => {
  it("the server snapshot is one array, call after call", () => {
    expect(serverNotices()).toBe(serverNotices());
    expect(serverNotices()).toEqual([]);
  });

  it("the client snapshot is the same array until a notice changes, then a new one", () => {
    const before = currentNotices();
    expect(currentNotices()).toBe(before);
    notify({ key: "t", tone: "info", title: "Top-up sent" });
    const after = currentNotices();
    expect(after).not.toBe(before);
    expect(currentNotices()).toBe(after);
    expect(after.map((n) => n.title)).toEqual(["Top-up sent"]);
    dismissNotice("t");
    expect(currentNotices()).toEqual([]);
  });
});
