/**
 * prisma/functions/ is the SQL that runs: one file per installed function, its whole `CREATE OR REPLACE` (settings
 * such as `SET enable_seqscan = off` inside it). Migrations change tables; they never restate a function. After
 * `prisma migrate deploy`, migrateDatabase (server/migrate.ts) installs every file, as Flyway's repeatable
 * migrations do: in one transaction under an advisory lock (instances starting together take turns), each after the
 * functions its body calls (a `LANGUAGE sql` body is checked when it is created), so a deploy leaves the database
 * running exactly the files. Re-installing an unchanged file changes nothing but the functions' cached plans.
 *
 * A change to a function is an edit of its file. A change CREATE OR REPLACE cannot make (another result type, other
 * arguments) also needs a migration that drops the old function first; a function that goes needs its file deleted
 * and a migration that drops it. tests/integration/sql-functions.test.ts fails when the database's definitions and
 * the files differ, tests/unit/sql-functions.test.ts when a migration defines a function itself.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const FUNCTIONS_DIR = "prisma/functions";

/** Any 64-bit key of our own: prisma migrate deploy holds its own lock, this one only orders our installs. */
const INSTALL_LOCK = 72_650_261_128n;

export type SqlFunctionFile = { name: string; text: string };

/** Every file of prisma/functions/, by name. */
export function readFunctionFiles(dir = FUNCTIONS_DIR): SqlFunctionFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((f) => ({ name: f.slice(0, -".sql".length), text: readFileSync(join(dir, f), "utf8") }));
}

/** The files in an order where each comes after every other function its text calls (by name); throws on a cycle. */
export function installOrder(files: SqlFunctionFile[]): SqlFunctionFile[] {
  const byName = new Map(files.map((f) => [f.name, f]));
  const calls = new Map(
    files.map((f) => [
      f.name,
      files.filter((g) => g.name !== f.name && new RegExp(`\\b"?${g.name}"?\\s*\\(`).test(f.text)).map((g) => g.name),
    ]),
  );
  const ordered: SqlFunctionFile[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, path: string[]) => {
    if (state.get(name) === "done") return;
    if (state.get(name) === "visiting")
      throw new Error(`prisma/functions: the functions call each other in a cycle: ${[...path, name].join(" → ")}`);
    state.set(name, "visiting");
    for (const callee of calls.get(name)!) visit(callee, [...path, name]);
    state.set(name, "done");
    ordered.push(byName.get(name)!);
  };
  for (const f of files) visit(f.name, []);
  return ordered;
}

/** Installs every file of prisma/functions/ into the database at `url`, in one transaction. */
export async function installFunctions(url: string, files = readFunctionFiles()): Promise<void> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [INSTALL_LOCK.toString()]);
    for (const file of installOrder(files)) {
      try {
        await client.query(file.text);
      } catch (error) {
        throw new Error(`${FUNCTIONS_DIR}/${file.name}.sql: ${(error as Error).message}`, { cause: error });
      }
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}
