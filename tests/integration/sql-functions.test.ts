import pg from "pg";
import { describe, expect, it } from "vitest";
import { requireDatabaseUrl } from "@/lib/env";
import { FUNCTIONS_DIR as FUNCTIONS, readFunctionFiles } from "../../server/sql-functions";

/**
 * The database runs what prisma/functions/ says: each file, installed into a scratch schema, has the same definition
 * (pg_get_functiondef: arguments, result, language, volatility, settings and body) as the function the deploy
 * installed, and every function the database has in public (triggers' included) has its file. All in one
 * transaction that is rolled back, so nothing is left behind.
 */

const SCRATCH = "svc_function_check";

const files = readFunctionFiles();

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

  // The hot path calls the rule functions per row: inlined they cost nothing, called they cost microseconds each. The
  // planner inlines a LANGUAGE sql function of one expression unless it is declared STRICT, SECURITY DEFINER, with a
  // SET, or less volatile than its body: a change that stops it shows here as the function's name in the plan.
  it("the money and routing rules are inlined into the statements that call them", async () => {
    const client = new pg.Client({ connectionString: requireDatabaseUrl() });
    await client.connect();
    try {
      const { rows } = await client.query<{ "QUERY PLAN": string }>(`
        EXPLAIN (VERBOSE)
        SELECT svc_offer_routable(o.status, o.unhealthy_until, o.probe_delisted, o.price_cents, o.daily_capacity_micro_diem,
                                  d.burned_micro_diem, d.held_micro_diem, 100, 1, now()),
               svc_offer_on_book(o.status, o.unhealthy_until, o.probe_delisted, o.daily_capacity_micro_diem, d.burned_micro_diem,
                                 d.held_micro_diem, now()),
               svc_offer_model_serves(om.supports_tools, om.supports_json_schema, om.supports_vision, true, false, true),
               svc_burn_micro_diem(1, 2, h.input_micro_diem_per_mtok, h.output_micro_diem_per_mtok),
               -- As svc_clear_batch splits a charge (svc_fee_micros names its charge twice: it is inlined only for
               -- an argument this cheap).
               svc_supplier_micros(LEAST(svc_charge_micros(h.burn_micro_diem, h.price_cents), h.amount_micros), 1000),
               svc_fee_micros(LEAST(svc_charge_micros(h.burn_micro_diem, h.price_cents), h.amount_micros), 1000),
               mc.charge_micros
        FROM offers o JOIN offer_models om ON om.offer_id = o.id
        LEFT JOIN offer_days d ON d.offer_id = o.id AND d.day = current_date
        LEFT JOIN holds h ON h.offer_id = o.id
        -- As svc_clear_batch meters a hold: the capped charge, a SQL function returning its row as a set, inlined in FROM.
        LEFT JOIN LATERAL svc_metered_charge(1, svc_cached_prompt_tokens(1, 2, 3, h.cache_read_micro_diem_per_mtok IS NOT NULL), 2,
                                             h.input_micro_diem_per_mtok, h.cache_read_micro_diem_per_mtok,
                                             h.output_micro_diem_per_mtok, h.price_cents, h.burn_micro_diem, h.amount_micros) mc ON true`);
      const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
      expect(plan).toContain("daily_capacity_micro_diem");
      expect(plan).not.toMatch(/svc_\w+\(/);
    } finally {
      await client.end();
    }
  });
});
