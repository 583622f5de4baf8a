/**
 * `npm run bench:http -- --soak N`: the long run. Drives N completions at one concurrency against svc alone, one
 * database, in steps of --soak-step (100,000), and prints per step the load's figures (rps, p50, p99), the CPU a
 * completion cost the app and PostgreSQL, the WAL it wrote, the hot path's tables and indexes (size, dead rows) and
 * what autovacuum did; at the end the first step against the last and the bytes each completion leaves behind.
 * Figures only, never asserted (scripts/bench-http.ts starts the processes and seeds the world).
 */
import pg from "pg";
import { benchBackends, cpuPerRequest, readCpu } from "./bench-cpu";

/** The tables a completion writes (holds, completions, clears, journal) or updates (balances, offers, keys, days). */
const HOT_TABLES = [
  "holds",
  "completions",
  "clears",
  "journal_entries",
  "journal_lines",
  "offer_stats",
  "offer_days",
  "offers",
  "ledger_accounts",
  "api_keys",
] as const;

type TableStats = { heapBytes: number; indexBytes: number; live: number; dead: number; autovacuums: number; autoanalyzes: number };
type DbStats = { tables: Map<string, TableStats>; walBytes: bigint; checkpoints: number };

async function readDbStats(client: pg.Client): Promise<DbStats> {
  const { rows } = await client.query<{
    relname: string;
    heap: string;
    idx: string;
    live: string;
    dead: string;
    av: string;
    aa: string;
  }>(
    `SELECT relname, pg_table_size(relid) AS heap, pg_indexes_size(relid) AS idx, n_live_tup AS live, n_dead_tup AS dead,
            autovacuum_count AS av, autoanalyze_count AS aa
       FROM pg_stat_user_tables WHERE relname = ANY($1)`,
    [HOT_TABLES],
  );
  const tables = new Map<string, TableStats>();
  for (const r of rows) {
    tables.set(r.relname, {
      heapBytes: Number(r.heap),
      indexBytes: Number(r.idx),
      live: Number(r.live),
      dead: Number(r.dead),
      autovacuums: Number(r.av),
      autoanalyzes: Number(r.aa),
    });
  }
  const {
    rows: [wal],
  } = await client.query<{ lsn: string; checkpoints: string }>(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn,
            (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)::text AS checkpoints`,
  );
  return { tables, walBytes: BigInt(wal.lsn.split(".")[0]), checkpoints: Number(wal.checkpoints) };
}

/** A table's columns in order, to clone rows with a few of them replaced. */
async function columnsOf(client: pg.Client, table: string): Promise<string[]> {
  const { rows } = await client.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  );
  return rows.map((r) => r.column_name);
}

/**
 * Grows the settled history by `count` completions without serving them: clones of the latest cleared completion
 * (its hold, completion, clear, journal entry and lines) under fresh ids, spread over the past 30 days, with the
 * ledger balances moved by exactly the cloned lines, so the ledger invariants still hold. The rows are the hot
 * path's own (same columns, same values but ids and times), so what the next steps measure is the hot path beside a
 * history of that size; how long the clone takes says nothing about the hot path and is not reported as a figure.
 */
async function growHistory(client: pg.Client, count: number): Promise<void> {
  const {
    rows: [template],
  } = await client.query<{ hold_id: string; completion_id: string; clear_id: string; entry_id: string }>(
    `SELECT c."hold_id", c."id" AS completion_id, cl."id" AS clear_id, je."id" AS entry_id
       FROM "completions" c JOIN "clears" cl ON cl."completion_id" = c."id" JOIN "journal_entries" je ON je."clear_id" = cl."id"
      ORDER BY c."created_at" DESC LIMIT 1`,
  );
  if (!template) throw new Error("growHistory: no cleared completion to clone yet");
  const clone = async (table: string, from: string, overrides: Record<string, string>, where: string, params: unknown[]) => {
    const columns = (await columnsOf(client, table)).filter((c) => !(table === "journal_lines" && c === "id"));
    const list = columns.map((c) => `"${c}"`).join(", ");
    const values = columns.map((c) => overrides[c] ?? `t."${c}"`).join(", ");
    await client.query(`INSERT INTO "${table}" (${list}) SELECT ${values} FROM bench_seed s CROSS JOIN ${from} t WHERE ${where}`, params);
  };
  const CHUNK = 250_000;
  for (let done = 0; done < count; done += CHUNK) {
    const n = Math.min(CHUNK, count - done);
    await client.query("BEGIN");
    try {
      // Without triggers (the foreign-key checks and the journal's balance check): the clones are consistent by
      // construction (copies of a checked completion under fresh ids), the ledger invariants are checked at the end,
      // and with them a million clones take minutes rather than most of an hour. Needs a superuser (the local one).
      await client.query("SET LOCAL session_replication_role = replica");
      await client.query(
        `CREATE TEMP TABLE bench_seed ON COMMIT DROP AS
           SELECT gen_random_uuid() AS hold_id, 'chatcmpl-' || substr(md5(random()::text || g::text), 1, 24) AS completion_id,
                  gen_random_uuid() AS clear_id, gen_random_uuid() AS entry_id,
                  now() - random() * interval '30 days' AS at
             FROM generate_series(1, $1) AS g`,
        [n],
      );
      const at = { created_at: "s.at" };
      await clone(
        "holds",
        `"holds"`,
        { ...at, id: "s.hold_id", settled_at: "s.at", expires_at: "s.at + interval '5 minutes'" },
        `t."id" = $1`,
        [template.hold_id],
      );
      await clone("completions", `"completions"`, { ...at, id: "s.completion_id", hold_id: "s.hold_id" }, `t."id" = $1`, [
        template.completion_id,
      ]);
      await clone("clears", `"clears"`, { ...at, id: "s.clear_id", completion_id: "s.completion_id" }, `t."id" = $1`, [template.clear_id]);
      await clone("journal_entries", `"journal_entries"`, { ...at, id: "s.entry_id", clear_id: "s.clear_id" }, `t."id" = $1`, [
        template.entry_id,
      ]);
      await clone("journal_lines", `"journal_lines"`, { entry_id: "s.entry_id" }, `t."entry_id" = $1`, [template.entry_id]);
      await client.query(
        `UPDATE "ledger_accounts" la SET "balance_micros" = la."balance_micros" + l."amount_micros" * $2
           FROM "journal_lines" l WHERE l."entry_id" = $1 AND la."id" = l."ledger_account_id"`,
        [template.entry_id, n],
      );
      // The clones count on the template's offer day (its hold's day), as its clear did.
      await client.query(
        `UPDATE "offer_days" d SET "clears" = d."clears" + $3, "earned_micros" = d."earned_micros" + c."supplier_micros" * $3
           FROM "holds" h, "clears" c WHERE h."id" = $1 AND c."id" = $2 AND d."offer_id" = h."offer_id" AND d."day" = h."day"`,
        [template.hold_id, template.clear_id, n],
      );
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK");
      throw error;
    }
  }
  // As a production database would have by then: statistics and a visibility map for the new rows.
  await client.query(`VACUUM (ANALYZE) "holds", "completions", "clears", "journal_entries", "journal_lines"`);
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
const sum = (s: DbStats, f: (t: TableStats) => number) => [...s.tables.values()].reduce((a, t) => a + f(t), 0);

export type SoakStep = { rps: number; p50Ms: number; p99Ms: number; requests: number; non2xx: number; errors: number };

export async function runSoak(input: {
  databaseUrl: string;
  /** The app's process (tree), whose CPU per completion is measured. */
  appPid: number | undefined;
  connections: number;
  total: number;
  step: number;
  /** History sizes (completions) to grow to by cloning settled rows, one after each step (see growHistory). */
  grow: number[];
  /** Runs the load until `done()` answers true; resolves with the load generator's figures. */
  load: (done: () => Promise<boolean>) => Promise<SoakStep>;
}): Promise<void> {
  const client = new pg.Client({ connectionString: input.databaseUrl });
  await client.connect();
  try {
    const settings = await client.query<{ name: string; setting: string; unit: string | null }>(
      `SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1) ORDER BY name`,
      [
        [
          "shared_buffers",
          "max_wal_size",
          "synchronous_commit",
          "autovacuum_vacuum_scale_factor",
          "autovacuum_vacuum_insert_scale_factor",
          "autovacuum_naptime",
          "autovacuum_vacuum_cost_limit",
        ],
      ],
    );
    console.log(
      `soak: ${input.total.toLocaleString("en-US")} completions at c=${input.connections} in steps of ${input.step.toLocaleString("en-US")}; ` +
        `PostgreSQL ${settings.rows.map((r) => `${r.name}=${r.setting}${r.unit ?? ""}`).join(" ")}\n`,
    );
    console.log(
      "  done     rps    p50 ms   p99 ms  app µs  pg µs  WAL B   hot heap MB  hot idx MB  holds heap/idx MB  dead rows  autovac/analyze  ckpt",
    );
    const steps: (SoakStep & { appUs: number | null; pgUs: number; walPerCompletion: number })[] = [];
    let before = await readDbStats(client);
    const first = before;
    const grow = [...input.grow];
    let cloned = 0;
    for (let done = 0; done < input.total;) {
      if (done > 0 && grow.length > 0) {
        const target = grow.shift()!;
        const history = Number((await client.query<{ n: string }>(`SELECT count(*)::text AS n FROM "clears"`)).rows[0].n);
        if (target > history) {
          const started = performance.now();
          await growHistory(client, target - history);
          cloned += target - history;
          console.log(
            `  (history grown to ${target.toLocaleString("en-US")} completions: ${(target - history).toLocaleString("en-US")} settled ones cloned and vacuumed in ${((performance.now() - started) / 1000).toFixed(0)} s)`,
          );
          before = await readDbStats(client);
        }
      }
      const requests = Math.min(input.step, input.total - done);
      const backends = await benchBackends(async (sql) => (await client.query<{ pid: number }>(sql)).rows);
      const cpuBefore = readCpu();
      const started = performance.now();
      // PostgreSQL's statistics count the clears (flushed about once a second): a cheap counter, not a COUNT(*).
      const cleared = async () =>
        Number(
          (await client.query<{ n: string }>(`SELECT n_tup_ins::text AS n FROM pg_stat_user_tables WHERE relname = 'clears'`)).rows[0].n,
        );
      const clearsBefore = await cleared();
      const f = await input.load(async () => (await cleared()) - clearsBefore >= requests);
      const seconds = (performance.now() - started) / 1000;
      const cpuAfter = readCpu();
      for (const pid of await benchBackends(async (sql) => (await client.query<{ pid: number }>(sql)).rows)) backends.add(pid);
      const cpu = cpuPerRequest(cpuBefore, cpuAfter, input.appPid, f.requests, backends);
      const after = await readDbStats(client);
      done += f.requests;
      const walPerCompletion = Number(after.walBytes - before.walBytes) / Math.max(1, f.requests);
      const step = { ...f, rps: f.requests / seconds, appUs: cpu?.serverUs ?? null, pgUs: cpu?.postgresUs ?? NaN, walPerCompletion };
      steps.push(step);
      const holds = after.tables.get("holds");
      const vacuums = sum(after, (t) => t.autovacuums) - sum(before, (t) => t.autovacuums);
      const analyzes = sum(after, (t) => t.autoanalyzes) - sum(before, (t) => t.autoanalyzes);
      console.log(
        [
          `${(done / 1000).toFixed(0)}k`.padStart(6),
          step.rps.toFixed(0).padStart(7),
          f.p50Ms.toFixed(1).padStart(9),
          f.p99Ms.toFixed(1).padStart(8),
          (step.appUs === null ? "n/a" : step.appUs.toFixed(0)).padStart(7),
          step.pgUs.toFixed(0).padStart(6),
          walPerCompletion.toFixed(0).padStart(6),
          mb(sum(after, (t) => t.heapBytes)).padStart(13),
          mb(sum(after, (t) => t.indexBytes)).padStart(11),
          `${mb(holds?.heapBytes ?? 0)}/${mb(holds?.indexBytes ?? 0)}`.padStart(18),
          String(sum(after, (t) => t.dead)).padStart(10),
          `${vacuums}/${analyzes}`.padStart(16),
          String(after.checkpoints - before.checkpoints).padStart(5),
        ].join(" ") + (f.non2xx || f.errors ? `  (${f.non2xx} non-2xx, ${f.errors} socket errors)` : ""),
      );
      before = after;
    }

    if (steps.length >= 2) {
      const a = steps[0];
      const z = steps[steps.length - 1];
      const pct = (x: number, y: number) => `${(((y - x) / x) * 100).toFixed(1)}%`;
      console.log(
        `\nlast step against the first: rps ${pct(a.rps, z.rps)}, p50 ${pct(a.p50Ms, z.p50Ms)}, p99 ${pct(a.p99Ms, z.p99Ms)}, ` +
          `app CPU ${a.appUs && z.appUs ? pct(a.appUs, z.appUs) : "n/a"}, PostgreSQL CPU ${pct(a.pgUs, z.pgUs)} per completion`,
      );
      const pgUs = steps.map((s) => s.pgUs).sort((x, y) => x - y)[steps.length >> 1];
      console.log(
        `PostgreSQL CPU per completion (median step): ${pgUs.toFixed(0)} µs, so one PostgreSQL core clears about ` +
          `${Math.round(1e6 / pgUs).toLocaleString("en-US")} completions a second at this batching`,
      );
    }
    const last = before;
    const completions = steps.reduce((n, s) => n + s.requests, 0) + cloned;
    console.log(
      `\nbytes each completion left behind (heap + indexes, first step's start to the end, ${completions.toLocaleString("en-US")} completions, cloned ones included):`,
    );
    for (const name of HOT_TABLES) {
      const x = first.tables.get(name);
      const y = last.tables.get(name);
      if (!x || !y) continue;
      const heap = (y.heapBytes - x.heapBytes) / completions;
      const idx = (y.indexBytes - x.indexBytes) / completions;
      console.log(
        `  ${name.padEnd(16)} heap ${heap.toFixed(0).padStart(5)} B  indexes ${idx.toFixed(0).padStart(5)} B  ` +
          `(now ${mb(y.heapBytes)} + ${mb(y.indexBytes)} MB, ${y.live.toLocaleString("en-US")} live rows, ${y.dead.toLocaleString("en-US")} dead)`,
      );
    }
  } finally {
    await client.end();
  }
}
