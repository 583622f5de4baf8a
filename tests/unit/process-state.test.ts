import { describe, expect, it, vi } from "vitest";
import { moduleCopy } from "../helpers/module-copy";

// Each call loads a separate copy of the module, as the front door's host process and Next's server bundle do.
const requestContextCopy = () => moduleCopy(() => import("@/lib/ops/request-context"));
const processStateCopy = () => moduleCopy(() => import("@/lib/process-state"));

describe("process state", () => {
  it("is created once per process and shared by every loaded copy of a module", async () => {
    const a = await requestContextCopy();
    const b = await requestContextCopy();
    expect(a).not.toBe(b);

    // A request context opened by one copy is the one the other copy reads, and a hold one copy tracks the other sees.
    const context = a.newRequestContext();
    const seen = a.runInRequestContext(context, () => b.currentRequestContext());
    expect(seen).toBe(context);
    b.trackHold("hold-shared-by-copies");
    expect(a.holdsInFlight()).toContain("hold-shared-by-copies");
    a.untrackHold("hold-shared-by-copies");
    expect(b.holdsInFlight()).not.toContain("hold-shared-by-copies");
  });

  it("runs create only for the first caller, from whichever copy", async () => {
    const a = await processStateCopy();
    const b = await processStateCopy();
    const name = `test-${Math.random()}`;
    const create = vi.fn(() => ({ n: 1 }));
    const first = b.processState(name, create);
    expect(a.processState(name, create)).toBe(first);
    expect(create).toHaveBeenCalledTimes(1);
  });

  it("gives a value set through one copy's slot to the other copy's slot", async () => {
    const a = await processStateCopy();
    const b = await processStateCopy();
    const name = `test-slot-${Math.random()}`;
    expect(b.processSlot<number>(name).get()).toBeUndefined();
    a.processSlot<number>(name).set(4321);
    expect(b.processSlot<number>(name).get()).toBe(4321);
  });
});
