import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { installOrder, readFunctionFiles, type SqlFunctionFile } from "../../server/sql-functions";

/**
 * prisma/functions/ holds the SQL that runs: one file per installed function, its CREATE OR REPLACE, installed after
 * the migrations on every deploy (server/sql-functions.ts). So a migration from 20261128000000_rules_once on never
 * creates, replaces or alters a function itself (only drops one, which its file's removal or a new signature needs);
 * the database is compared with the files in tests/integration/sql-functions.test.ts.
 */

const MIGRATIONS = "prisma/migrations";
/** The first migration written after the functions moved to their files; earlier ones are history, left as applied. */
const FILES_FROM = "20261128000000_rules_once";

const files = readFunctionFiles();
const migrations = readdirSync(MIGRATIONS)
  .filter((d) => /^\d{14}_/.test(d))
  .sort()
  .map((d) => ({ name: d, sql: readFileSync(`${MIGRATIONS}/${d}/migration.sql`, "utf8") }));

const STATEMENT = /^\s*(CREATE(?: OR REPLACE)? FUNCTION|DROP FUNCTION(?: IF EXISTS)?|ALTER FUNCTION)\s+"?([a-z_][a-z0-9_]*)"?\s*\(/gim;

describe("prisma/functions", () => {
  it.each(files)("$name.sql is one CREATE OR REPLACE of the function it is named after, its settings inside it", ({ name, text }) => {
    const creates = [...text.matchAll(STATEMENT)];
    expect(creates.map((m) => [m[1].toUpperCase(), m[2]])).toEqual([["CREATE OR REPLACE FUNCTION", name]]);
  });

  it("are the only place a function is defined: no migration since the move creates, replaces or alters one", () => {
    const later = migrations.filter((m) => m.name >= FILES_FROM);
    expect(later.map((m) => m.name)).toContain(FILES_FROM);
    const defined = later.flatMap((m) =>
      [...m.sql.matchAll(STATEMENT)].filter((s) => !/^DROP/i.test(s[1])).map((s) => `${m.name}: ${s[1]} ${s[2]}`),
    );
    expect(defined).toEqual([]);
  });

  it("install each function after the ones its body calls", () => {
    const order = installOrder(files).map((f) => f.name);
    expect([...order].sort()).toEqual(files.map((f) => f.name));
    // svc_offer_on_book calls svc_offer_routable, which calls svc_offer_healthy and svc_offer_remaining_micro_diem.
    const at = (name: string) => order.indexOf(name);
    expect(at("svc_offer_healthy")).toBeLessThan(at("svc_offer_routable"));
    expect(at("svc_offer_remaining_micro_diem")).toBeLessThan(at("svc_offer_routable"));
    expect(at("svc_offer_routable")).toBeLessThan(at("svc_offer_on_book"));
  });

  it("refuse functions that call each other in a cycle", () => {
    const cyclic: SqlFunctionFile[] = [
      { name: "svc_a", text: "CREATE OR REPLACE FUNCTION svc_a() RETURNS int LANGUAGE sql AS $$ SELECT svc_b() $$;" },
      { name: "svc_b", text: "CREATE OR REPLACE FUNCTION svc_b() RETURNS int LANGUAGE sql AS $$ SELECT svc_a() $$;" },
    ];
    expect(() => installOrder(cyclic)).toThrow(/cycle: svc_a → svc_b → svc_a/);
  });
});
