/**
 * A second (third…) app instance for multi-process tests: a child process serving the app's own route handlers over
 * HTTP (tests/helpers/route-server.ts) against the same database, with its own pools, caches and group-commit
 * batchers, as another server of a deployment would have. The child prints its URL on its first line of stdout.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export type AppProcess = { url: string; pid: number; child: ChildProcess; kill: (signal?: NodeJS.Signals) => Promise<void> };

const CHILD = "tests/helpers/app-process-main.ts";

export async function startAppProcess(env: Record<string, string> = {}): Promise<AppProcess> {
  // tsx as a loader in this very node (not its CLI, which would run the server in a grandchild): killing `pid`
  // kills the server itself.
  const child = spawn(process.execPath, ["--import", "tsx", "--import", "./server/server-modules.mjs", CHILD], {
    // eslint-disable-next-line no-restricted-properties -- the child inherits the test run's configuration
    env: { ...process.env, RATE_LIMIT_PER_KEY_PER_MINUTE: "1000000", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (line) => resolve(line.trim()));
    child.once("exit", (code) => reject(new Error(`app process exited (${code}) before listening`)));
  });
  return {
    url,
    pid: child.pid!,
    child,
    kill: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
