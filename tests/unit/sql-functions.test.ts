import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * prisma/functions/ holds the SQL that runs: one file per installed function, its CREATE OR REPLACE. A migration that
 * changes a function installs the file's text (npm run db:function-migration writes it), so reading the newest
 * migration that defines a function shows exactly what the database runs; the database itself is compared with the
 * files in tests/integration/sql-functions.test.ts.
 */

const FUNCTIONS = "prisma/functions";
const MIGRATIONS = "prisma/migrations";

const files = readdirSync(FUNCTIONS)
  .filter((f) => f.endsWith(".sql"))
  .sort()
  .map((f) => ({ name: f.slice(0, -".sql".length), text: readFileSync(`${FUNCTIONS}/${f}`, "utf8") }));

const migrations = readdirSync(MIGRATIONS)
  .filter((d) => /^\d{14}_/.test(d))
  .sort()
  .map((d) => ({ name: d, sql: readFileSync(`${MIGRATIONS}/${d}/migration.sql`, "utf8") }));

/** What each migration does to functions, in order: CREATE [OR REPLACE], DROP or ALTER, by function name. */
const STATEMENT = /^\s*(CREATE(?: OR REPLACE)? FUNCTION|DROP FUNCTION(?: IF EXISTS)?|ALTER FUNCTION)\s+"?([a-z_][a-z0-9_]*)"?\s*\(/gim;
type Event = { migration: string; kind: "create" | "drop" | "alter"; fn: string };
const events: Event[] = migrations.flatMap(({ name, sql }) =>
  [...sql.matchAll(STATEMENT)].map((m) => ({
    migration: name,
    kind: (m[1].toUpperCase().startsWith("CREATE") ? "create" : m[1].toUpperCase().startsWith("DROP") ? "drop" : "alter") as Event["kind"],
    fn: m[2].toLowerCase(),
  })),
);

/** Functions the migrations leave installed: created, and not dropped after their last creation. */
function installed(): string[] {
  const last = new Map<string, Event["kind"]>();
  for (const e of events) if (e.kind !== "alter") last.set(e.fn, e.kind);
  return [...last]
    .filter(([, kind]) => kind === "create")
    .map(([fn]) => fn)
    .sort();
}

describe("prisma/functions", () => {
  it("holds one file for every function the migrations leave installed, and no other", () => {
    expect(files.map((f) => f.name)).toEqual(installed());
  });

  it.each(files)("$name.sql is one CREATE OR REPLACE of the function it is named after, its settings inside it", ({ name, text }) => {
    const creates = [...text.matchAll(STATEMENT)];
    expect(creates.map((m) => [m[1].toUpperCase(), m[2]])).toEqual([["CREATE OR REPLACE FUNCTION", name]]);
  });

  it.each(files)("the newest migration that defines $name installs its file's text, and none changes it after", ({ name, text }) => {
    const mine = events.filter((e) => e.fn === name);
    const lastCreate = mine.filter((e) => e.kind === "create").at(-1)!;
    expect(lastCreate, `no migration creates ${name}`).toBeDefined();
    const sql = migrations.find((m) => m.name === lastCreate.migration)!.sql;
    expect(sql.includes(text.trimEnd()), `${lastCreate.migration} does not contain ${FUNCTIONS}/${name}.sql verbatim`).toBe(true);
    // A setting is part of the definition (SET ... inside the CREATE): an ALTER FUNCTION after it would make the
    // database differ from the file, and a CREATE OR REPLACE would silently drop it again.
    const after = mine.filter((e) => e.migration > lastCreate.migration || (e.migration === lastCreate.migration && e.kind === "alter"));
    expect(after).toEqual([]);
  });
});
