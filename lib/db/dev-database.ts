import "server-only";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * How the tools find the database of a running `npm run dev`: while it runs, the dev stack writes the embedded
 * database's URL and its own pid here (git-ignored), and removes the file when it stops. lib/env.ts's
 * requireDatabaseUrl reads it when DATABASE_URL is unset outside production and test, so `npm run catalog`,
 * `npm run probes` and the other CLIs started beside the dev stack use its database without being told where it is.
 * A file whose process is gone (the stack was killed) is ignored.
 */
export const DEV_DATABASE_FILE = ".data/dev-database.json";

export type DevDatabase = { url: string; pid: number; dataDir: string };

export function writeDevDatabase(entry: DevDatabase, file = DEV_DATABASE_FILE): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(entry, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
}

/** The running dev stack's database, or undefined when none runs (no file, or its process is gone). */
export function readRunningDevDatabase(file = DEV_DATABASE_FILE): DevDatabase | undefined {
  let entry: Partial<DevDatabase>;
  try {
    entry = JSON.parse(readFileSync(file, "utf8")) as Partial<DevDatabase>;
  } catch {
    return undefined;
  }
  if (typeof entry.url !== "string" || typeof entry.pid !== "number" || !isAlive(entry.pid)) return undefined;
  return { url: entry.url, pid: entry.pid, dataDir: String(entry.dataDir ?? "") };
}

/** Removes the file if it is still this process's own. */
export function removeDevDatabase(pid = process.pid, file = DEV_DATABASE_FILE): void {
  try {
    const entry = JSON.parse(readFileSync(file, "utf8")) as Partial<DevDatabase>;
    if (entry.pid === pid) rmSync(file, { force: true });
  } catch {
    // No file (or not ours to judge): nothing to remove.
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
