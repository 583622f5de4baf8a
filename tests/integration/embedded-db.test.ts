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
