import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readRunningDevDatabase, removeDevDatabase, writeDevDatabase } from "@/lib/db/dev-database";

/** The CLIs find a running `npm run dev`'s embedded database through this file (lib/env.ts requireDatabaseUrl). */
describe("the running dev stack's database file", () => {
  const file = () => path.join(mkdtempSync(path.join(tmpdir(), "svc-devdb-")), ".data", "dev-database.json");
  const url = "postgresql://postgres:postgres@127.0.0.1:54329/postgres?connection_limit=10";

  it("names the database while the stack's process lives", () => {
    const f = file();
    expect(readRunningDevDatabase(f)).toBeUndefined();
    writeDevDatabase({ url, pid: process.pid, dataDir: ".data/pglite" }, f);
    expect(readRunningDevDatabase(f)).toEqual({ url, pid: process.pid, dataDir: ".data/pglite" });
    removeDevDatabase(process.pid + 1, f); // another process's stop leaves it alone
    expect(existsSync(f)).toBe(true);
    removeDevDatabase(process.pid, f);
    expect(existsSync(f)).toBe(false);
  });

  it("is ignored once the stack's process is gone (killed without cleaning up)", () => {
    const f = file();
    const gone = spawnSync(process.execPath, ["-e", ""]).pid!;
    writeDevDatabase({ url, pid: gone, dataDir: ".data/pglite" }, f);
    expect(readRunningDevDatabase(f)).toBeUndefined();
  });
});
