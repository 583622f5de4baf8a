/**
 * The child of tests/helpers/app-process.ts: the app's routes on a free loopback port; prints the URL, then serves.
 *
 * SVC_TEST_CLOCK_START (an ISO instant, tests only): the child's clock starts there and runs on in real time, so a
 * test can put its app processes at a chosen time of day (a UTC-period test away from midnight) without waiting. It
 * shifts `Date` before the app's modules load; nothing in the app reads this variable.
 *
 * SVC_TEST_EXIT_ON_SIGTERM=1: SIGTERM drains and exits as server/main.ts has it (lib/ops/shutdown.ts exitOnSignals,
 * SHUTDOWN_GRACE_MS); without it SIGTERM ends the child at once, as the tests that kill it expect.
 */
// eslint-disable-next-line no-restricted-properties -- a test helper's own knob, read before the app loads
const clockStart = process.env.SVC_TEST_CLOCK_START;
if (clockStart) {
  const offset = Date.parse(clockStart) - Date.now();
  if (Number.isNaN(offset)) throw new Error(`SVC_TEST_CLOCK_START is not an instant: ${clockStart}`);
  const RealDate = Date;
  class ShiftedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + offset);
      else super(...(args as [string | number | Date]));
    }
    static now(): number {
      return RealDate.now() + offset;
    }
  }
  globalThis.Date = ShiftedDate as DateConstructor;
}

// After the clock: the app's modules load (and read the shifted Date) only from here.
const { startRouteServer } = await import("./route-server");
const server = await startRouteServer();
// eslint-disable-next-line no-restricted-properties -- a test helper's own knob
if (process.env.SVC_TEST_EXIT_ON_SIGTERM === "1") {
  const [{ env }, { db }, { refuseShuttingDown }, { exitOnSignals }, { releaseHold }] = await Promise.all([
    import("@/lib/env"),
    import("@/lib/db/client"),
    import("@/lib/http/front-door"),
    import("@/lib/ops/shutdown"),
    import("@/lib/router/holds"),
  ]);
  exitOnSignals(server.server, {
    graceMs: env.SHUTDOWN_GRACE_MS,
    releaseHold: (id) => releaseHold(id),
    refuse: refuseShuttingDown,
    close: () => db.$disconnect(),
    say: (line) => process.stderr.write(`${line}\n`),
  });
}
process.stdout.write(`${server.url}\n`);

export {};
