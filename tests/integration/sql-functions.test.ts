import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { requireDatabaseUrl } from "@/lib/env";

/**
 * The database runs what prisma/functions/ says: each file, installed into a scratch schema, has the same definition
 * (pg_get_functiondef: arguments, result, language, volatility, settings and body) as the function the migrations
 * installed, and every function the database has in public (triggers' included) has its file. All in one
 * transaction that is rolled back, so nothing is left behind.
 */

const FUNCTIONS = "prisma/functions";
const SCRATCH = "svc_function_check";

const files = readdirSync(FUNCTIONS)
  .filter((f) => f.endsWith(".sql"))
  .sort()
  .map((f) => ({ name: f.slice(0, -".sql".length), text: readFileSync(`${FUNCTIONS}/${f}`, "utf8") }));

type Definition = { name: string; def: string };

async function definitions(client: pg.Client, schema: string): Promise<Map<string, string>> {
  // Outside extensions (none today, but an extension's functions are not ours to keep in files).
  const { rows } = await client.query<Definition>(
    `SELECT p.proname::text AS name, pg_get_functiondef(p.oid) AS def
     FROM pg_proc p
     WHERE p.pronamespace = $1::regnamespace
       AND NOT EXISTS (SELECT 1 FROM pg_depend dep WHERE dep.classid = 'pg_proc'::regclass AND dep.objid = p.oid AND dep.deptype = 'e')
     ORDER BY 1`,
    [schema],
  );
  return new Map(rows.map((r) => [r.name, r.def]));
}

describe("the database's functions", () => {
  it("are exactly the definitions in prisma/functions/", async () => {
    const client = new pg.Client({ connectionString: requireDatabaseUrl() });
    await client.connect();
    try {
      await client.query("BEGIN");
      const live = await definitions(client, "public");
      expect([...live.keys()]).toEqual(files.map((f) => f.name));

      await client.query(`CREATE SCHEMA ${SCRATCH}`);
      // The files name their functions unqualified: created in the first schema of the path, their bodies resolving
      // tables, types and the other rule functions in public as the migrations' do.
      await client.query(`SET LOCAL search_path = ${SCRATCH}, public`);
      for (const f of files) await client.query(f.text);
      await client.query("SET LOCAL search_path = public");
      const fromFiles = await definitions(client, SCRATCH);

      for (const f of files) {
        const def = fromFiles.get(f.name)!.replace(`FUNCTION ${SCRATCH}.${f.name}(`, `FUNCTION public.${f.name}(`);
        expect(def, `${f.name}: the database's definition differs from ${FUNCTIONS}/${f.name}.sql`).toBe(live.get(f.name));
      }
    } finally {
      await client.query("ROLLBACK").catch(() => {});
      await client.end();
    }
  });
});
