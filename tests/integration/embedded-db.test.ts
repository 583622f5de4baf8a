import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedDatabase, type EmbeddedDatabase } from "../../scripts/embedded-db";

/**
 * The embedded database (PGlite behind scripts/pglite-server.ts) must behave like a PostgreSQL server to
 * several clients at once: these are the cases the stock pglite-socket queue gets wrong.
 */
let server: EmbeddedDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  server = await startEmbeddedDatabase();
  pool = new pg.Pool({ connectionString: server.url, max: 4 });
  await pool.query(`
    CREATE TABLE t (x int);
    CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
    CREATE TRIGGER refuse_big AFTER INSERT ON t REFERENCING NEW TABLE AS n FOR EACH STATEMENT
      WHEN (true) EXECUTE FUNCTION refuse();`);
});

afterAll(async () => {
  await pool.end();
  await server.stop();
});

describe("the embedded database server", () => {
  it("keeps each connection's answers in step after an error inside an extended-protocol query", async () => {
    const client = await pool.connect();
    try {
      for (let i = 0; i < 10; i++) {
        await expect(client.query("INSERT INTO t VALUES ($1)", [i])).rejects.toThrow(/refused/);
        const { rows } = await client.query("SELECT $1::int AS n", [i]);
        expect(rows).toEqual([{ n: i }]);
      }
    } finally {
      client.release();
    }
  });

  it("keeps a failed transaction on its own connection until it rolls back", async () => {
    const a = await pool.connect();
    const b = await pool.connect();
    try {
      await a.query("BEGIN");
      await expect(a.query("INSERT INTO t VALUES ($1)", [1])).rejects.toThrow(/refused/);
      const other = b.query("SELECT 42 AS n");
      await a.query("ROLLBACK");
      expect((await other).rows).toEqual([{ n: 42 }]);
      expect((await a.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      a.release();
      b.release();
    }
  });

  it("does not interleave concurrent clients' prepared statements", async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => pool.query("SELECT $1::int * 2 AS n", [i])));
    expect(results.map((r) => r.rows[0].n)).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
  });
});

/**
 * `npm run dev`'s embedded database must come up whatever the last start left behind: a start killed while PGlite
 * initialized (Ctrl-C, a crash, the old 30 s deadline) once left a data folder that aborted every later start.
 */
describe("the embedded database's start (npm run dev)", () => {
  const SLOW = 240_000; // PGlite's first initialization: 10 s to over a minute on a loaded machine

  function tempDataDir() {
    return path.join(mkdtempSync(path.join(tmpdir(), "svc-embedded-")), "pglite");
  }

  async function roundTrip(db: EmbeddedDatabase, sql: string) {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      return (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  }

  it(
    "comes up after a start killed mid-initialization, and keeps its data across restarts",
    async () => {
      const dataDir = tempDataDir();
      // The server as `npm run dev` starts it, killed once it has begun initializing and had a moment to write.
      const child = spawn(process.execPath, ["--import", "tsx", "scripts/pglite-server.ts", `--db=${dataDir}`, "--port=0"], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => d.toString().includes("phase: initializing") && resolve());
        child.once("exit", (code) => reject(new Error(`exited (${code}) before initializing`)));
      });
      await new Promise((r) => setTimeout(r, 2_000));
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
      expect(existsSync(dataDir)).toBe(false); // the data folder is only ever a complete one
      expect(readdirSync(path.dirname(dataDir))).toEqual([`pglite.init-${child.pid}`]);

      const progress: string[] = [];
      let db = await startEmbeddedDatabase({ dataDir, onProgress: (m) => progress.push(m), progressEveryMs: 1_000 });
      try {
        await roundTrip(db, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)");
      } finally {
        await db.stop();
      }
      // The killed start's leftovers are gone; what was shown said what it was doing while it took its time.
      expect(readdirSync(path.dirname(dataDir))).toEqual(["pglite"]);
      expect(progress.some((m) => m.startsWith("initializing a new database"))).toBe(true);
      expect(progress.some((m) => /^still initializing .* s so far/.test(m))).toBe(true);

      db = await startEmbeddedDatabase({ dataDir });
      try {
        expect(await roundTrip(db, "SELECT x FROM kept")).toEqual([{ x: 7 }]);
      } finally {
        await db.stop();
      }
    },
    SLOW,
  );

  it(
    "moves a data folder it cannot open aside, says where, and starts a new database",
    async () => {
      const dataDir = tempDataDir();
      // What a start killed by an older version left: a folder PGlite recognizes as a database and cannot open.
      mkdirSync(path.join(dataDir, "base"), { recursive: true });
      writeFileSync(path.join(dataDir, "PG_VERSION"), "17\n");

      const progress: string[] = [];
      const db = await startEmbeddedDatabase({ dataDir, onProgress: (m) => progress.push(m) });
      try {
        expect(await roundTrip(db, "SELECT 1 AS one")).toEqual([{ one: 1 }]);
      } finally {
        await db.stop();
      }
      const aside = readdirSync(path.dirname(dataDir)).find((name) => name.startsWith("pglite.unreadable-"));
      expect(aside).toBeDefined();
      const asidePath = path.join(path.dirname(dataDir), aside!);
      expect(readFileSync(path.join(asidePath, "PG_VERSION"), "utf8")).toBe("17\n"); // kept, not deleted
      const said = progress.find((m) => m.startsWith("could not open"));
      expect(said).toContain(`moved it aside to ${asidePath}`);
      expect(said).toContain(`rm -rf ${dataDir} && mv ${asidePath} ${dataDir}`);
    },
    SLOW,
  );

  it("refuses a port already in use before touching the data folder (a second npm run dev)", async () => {
    const dataDir = tempDataDir();
    await expect(startEmbeddedDatabase({ dataDir, port: server.port })).rejects.toThrow(/already in use.*another `npm run dev`/);
    expect(existsSync(dataDir)).toBe(false);
  });
});
