/**
 * The embedded database for a machine without PostgreSQL: PGlite (PostgreSQL 17 in WASM) served over
 * the Postgres wire protocol (scripts/pglite-server.ts), so Prisma, psql and the app connect as to any server.
 */
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createConnection } from "node:net";
import { freePort, waitFor } from "./process-utils";

export type EmbeddedDatabase = { url: string; port: number; stop: () => Promise<void> };

// Connections are cheap here (one backend behind a queue), and each app process opens up to 13 (Prisma's pool of 10
// and the hot path's 3): room for the dev server, the CLI tools and the multi-process tests' extra instances.
const MAX_CONNECTIONS = 100;

/** `dataDir` keeps data across runs (dev); omit it for a throwaway in-memory database (tests). */
export async function startEmbeddedDatabase(opts: { dataDir?: string; port?: number } = {}): Promise<EmbeddedDatabase> {
  const port = opts.port || (await freePort());
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "scripts/pglite-server.ts",
      `--db=${opts.dataDir ?? "memory://"}`,
      `--port=${port}`,
      `--max-connections=${MAX_CONNECTIONS}`,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  await waitFor(`embedded database on port ${port}`, 30_000, async () => {
    if (child.exitCode !== null) throw new Error(`pglite-server exited (${child.exitCode}):\n${output}`);
    return output.includes("listening") && (await canConnect(port));
  });

  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres?connection_limit=10`,
    port,
    stop: async () => {
      process.removeListener("exit", killOnExit);
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: "127.0.0.1" }, () => {
      socket.end();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}
