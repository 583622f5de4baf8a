import { vi } from "vitest";

/**
 * A fresh copy of a module and of every module it loads, as the production process holds two (the front door's host
 * and Next's server bundle each load their own): for tests of what those copies share (lib/process-state.ts).
 */
export async function moduleCopy<T>(load: () => Promise<T>): Promise<T> {
  vi.resetModules();
  return load();
}
