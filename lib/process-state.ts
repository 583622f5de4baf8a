/**
 * State that must exist once per process, whatever loads the module that owns it. Two module graphs run in one
 * process: the front door's host (server/main.ts, which serves the completion route itself) and Next's server
 * bundle, each with its own copy of every lib module; and Next's dev server re-evaluates modules on every edit.
 * A module-level `const` would be one per copy, so a pool, a registry, a rate-limit window or the draining flag
 * would split in two (or leak on each reload). Such state lives here instead, on `globalThis` under
 * `Symbol.for("svc." + name)`, which every copy of every module resolves to the same key.
 *
 * The contract: `create` runs at most once per process per name (the first caller's, from either graph); every
 * later call, from any copy, gets that same value. So a name is one shape for good: its callers share the type.
 * The value's classes are those of the graph that created it, so callers use it through its own methods and
 * fields, never `instanceof` against their copy's classes.
 */
import "server-only";

type Holder = Record<symbol, unknown>;

/** The process-wide value called `name`, created by `create` on the first call in this process. */
export function processState<T>(name: string, create: () => T): T {
  const key = Symbol.for(`svc.${name}`);
  const holder = globalThis as unknown as Holder;
  if (!(key in holder)) holder[key] = create();
  return holder[key] as T;
}

/** A process-wide value set by one module and read by another (the server records the port it listens on). */
export type ProcessSlot<T> = { get(): T | undefined; set(value: T): void };

/** A typed slot for a value that is set from outside the module reading it; undefined until set. */
export function processSlot<T>(name: string): ProcessSlot<T> {
  const box = processState<{ value?: T }>(name, () => ({}));
  return {
    get: () => box.value,
    set: (value) => {
      box.value = value;
    },
  };
}
