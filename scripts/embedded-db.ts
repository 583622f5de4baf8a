/**
 * The embedded database for a machine without PostgreSQL: PGlite (PostgreSQL 17 in WASM) served over
 * the Postgres wire protocol (scripts/pglite-server.ts), so Prisma, psql and the app connect as to any server.
 *
 * A start that cannot wedge:
 * - No fixed deadline. PGlite's first initialization takes 10 s to over a minute on a busy machine; the server is
 *   waited for as long as its process lives, and what it is doing is reported (`onProgress`) every few seconds.
 * - A new data folder is initialized in a temporary folder and renamed into place when complete
 *   (scripts/pglite-server.ts), so a start killed while initializing leaves no half-made data folder; its temporary
 *   folder is removed by the next start.
 * - A data folder the server cannot open (one an older version left half-initialized, a corrupted one) is moved
 *   aside to `<dataDir>.unreadable-<time>`, said so with where it went, and a new database is initialized.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import path from "node:path";
import { freePort } from "./process-utils";

export type EmbeddedDatabase = { url: string; port: number; stop: () => Promise<void> };

export type EmbeddedDatabaseOptions = {
  /** Keeps data across runs (dev); omit it for a throwaway in-memory database (tests). */
  dataDir?: string;
  port?: number;
  /** What the start is doing, a line at a time (the dev stack prints them). */
  onProgress?: (message: string) => void;
  /** How often a still-running phase is reported again. */
  progressEveryMs?: number;
};

// Connections are cheap here (one backend behind a queue), and each app process opens up to 13 (Prisma's pool of 10
// and the hot path's 3): room for the dev server, the CLI tools and the multi-process tests' extra instances.
const MAX_CONNECTIONS = 100;

export async function startEmbeddedDatabase(opts: EmbeddedDatabaseOptions = {}): Promise<EmbeddedDatabase> {
  const port = opts.port || (await freePort());
  // Before the data folder is touched: a second stack on the same port would open the same folder twice.
  if (opts.port && (await canConnect(port))) {
    throw new Error(
      `port ${port} is already in use: is another \`npm run dev\` running? Stop it first (the embedded database serves one stack).`,
    );
  }
  if (!opts.dataDir) return await serve("memory://", port, opts);
  removeAbandonedInitializations(opts.dataDir);
  const existed = isInitialized(opts.dataDir);
  try {
    return await serve(opts.dataDir, port, opts);
  } catch (error) {
    if (!existed || !(error instanceof ServerExited) || error.phase !== "opening") throw error;
    const aside = setAside(opts.dataDir);
    opts.onProgress?.(
      `could not open the database in ${opts.dataDir}; moved it aside to ${aside} and starting a new one` +
        ` (it said: ${error.lastLine}). To go back: stop, then \`rm -rf ${opts.dataDir} && mv ${aside} ${opts.dataDir}\`.`,
    );
    return await serve(opts.dataDir, port, opts);
  }
}

/** The server process ended before it listened, in `phase` (what it said last). */
class ServerExited extends Error {
  constructor(
    readonly phase: "starting" | "initializing" | "opening",
    readonly lastLine: string,
    output: string,
    code: number | null,
  ) {
    super(`the embedded database exited (${code ?? "signal"}) while ${phase}:\n${output}`);
  }
}

function serve(db: string, port: number, opts: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "scripts/pglite-server.ts", `--db=${db}`, `--port=${port}`, `--max-connections=${MAX_CONNECTIONS}`],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const stop = async () => {
    process.removeListener("exit", killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };

  return new Promise((resolve, reject) => {
    let output = "";
    let phase: ServerExited["phase"] = "starting";
    let phaseText = "starting the embedded database";
    let phaseSince = Date.now();
    let listening = false;
    const started = Date.now();
    const ticker = setInterval(() => {
      opts.onProgress?.(`still ${phaseText}: ${Math.round((Date.now() - phaseSince) / 1000)} s so far, waiting as long as it takes`);
    }, opts.progressEveryMs ?? 5_000);
    ticker.unref();

    const onLine = (line: string) => {
      const said = /^phase: (.*)$/.exec(line);
      if (said) {
        phase = said[1].startsWith("initializing") ? "initializing" : said[1].startsWith("opening") ? "opening" : phase;
        phaseText = said[1];
        phaseSince = Date.now();
        const first = said[1].startsWith("initializing");
        opts.onProgress?.(first ? `${phaseText} (a first start takes from 10 s to over a minute)` : phaseText);
      } else if (line.includes("listening") && !listening) {
        listening = true;
        void waitUntilConnectable();
      }
    };
    const waitUntilConnectable = async () => {
      while (!(await canConnect(port))) {
        if (child.exitCode !== null || child.signalCode !== null) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      clearInterval(ticker);
      opts.onProgress?.(`ready after ${((Date.now() - started) / 1000).toFixed(1)} s`);
      resolve({ url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres?connection_limit=10`, port, stop });
    };
    let pending = "";
    const onData = (chunk: Buffer) => {
      output += chunk;
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) onLine(line.trim());
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("error", (error) => {
      clearInterval(ticker);
      reject(error);
    });
    child.once("exit", (code) => {
      clearInterval(ticker);
      process.removeListener("exit", killOnExit);
      const lines = output.trim().split("\n").filter(Boolean);
      const said = lines.find((line) => /error|abort/i.test(line)) ?? lines.at(-1) ?? "";
      reject(new ServerExited(phase, said.trim().slice(0, 300), output.slice(-4000), code));
    });
  });
}

/** Whether `dir` holds a database (anything at all: PGlite writes the folder only through its temporary one now). */
function isInitialized(dir: string): boolean {
  return existsSync(dir) && readdirSync(dir).length > 0;
}

/** `<dataDir>.init-<pid>` folders whose process is gone: initializations that were killed. */
function removeAbandonedInitializations(dataDir: string): void {
  const parent = path.dirname(dataDir);
  const prefix = `${path.basename(dataDir)}.init-`;
  if (!existsSync(parent)) return;
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (Number.isInteger(pid) && isRunning(pid)) continue;
    rmSync(path.join(parent, name), { recursive: true, force: true });
  }
}

function setAside(dataDir: string): string {
  const aside = `${dataDir}.unreadable-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  renameSync(dataDir, aside);
  return aside;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
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
