/**
 * npm run db:function-migration -- <migration dir name> <function>... : writes a new migration that installs the given
 * functions from their files in prisma/functions/ (each file one CREATE OR REPLACE, in the order given, so a function
 * comes after those its body calls). prisma/functions/ holds the SQL that runs; a migration never restates a function
 * by hand: tests/unit/sql-functions.test.ts fails when the newest migration that defines a function does not contain
 * its file's text, and tests/integration/sql-functions.test.ts when the database's definition differs from the file.
 * Anything else the migration must do (a DROP, a column) is written by hand around the generated text, with the why
 * in its header.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const MIGRATIONS = "prisma/migrations";
const FUNCTIONS = "prisma/functions";

function main(args: string[]): void {
  const [name, ...functions] = args;
  if (!name || functions.length === 0) {
    throw new Error("usage: npm run db:function-migration -- <YYYYMMDDHHMMSS_name> <function> [<function>...]");
  }
  if (!/^\d{14}_[a-z0-9_]+$/.test(name)) throw new Error(`${name}: a migration is named YYYYMMDDHHMMSS_snake_case`);
  const newest = readdirSync(MIGRATIONS)
    .filter((d) => /^\d{14}_/.test(d))
    .sort()
    .at(-1);
  if (newest && name <= newest) throw new Error(`${name} must sort after the newest migration, ${newest}`);
  const dir = join(MIGRATIONS, name);
  if (existsSync(dir)) throw new Error(`${dir} exists`);
  const body = functions.map((f) => {
    const file = join(FUNCTIONS, `${f}.sql`);
    if (!existsSync(file)) throw new Error(`${file} does not exist`);
    return readFileSync(file, "utf8").trimEnd();
  });
  mkdirSync(dir);
  const header = [
    "-- TODO: why this migration (hand-written).",
    `-- Installs ${functions.join(", ")} from prisma/functions/ (npm run db:function-migration).`,
  ];
  writeFileSync(join(dir, "migration.sql"), `${header.join("\n")}\n\n${body.join("\n\n")}\n`);
  console.log(`wrote ${join(dir, "migration.sql")}`);
}

main(process.argv.slice(2));
