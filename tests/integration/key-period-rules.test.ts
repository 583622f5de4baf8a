/**
 * The key-period rule is SQL (prisma/functions/svc_key_period_start.sql, svc_key_period_spent_micros.sql: the
 * reservation holds a resetting limit with them); lib/auth/key-periods.ts is its TypeScript mirror for the views (the
 * period's spend, the next reset). Both are compared on thousands of seeded random instants, weighted to the edges
 * (a period's first and last millisecond, month ends, leap days, years outside 1970..2038), on a connection whose
 * time zone is not UTC (the rule is UTC whatever the session says). SVC_RULES_SEED=<n> replays a run;
 * SVC_RULES_CASES=<n> changes its size.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyPeriodEnd, keyPeriodSpentMicros, keyPeriodStart } from "@/lib/auth/key-periods";
import { LIMIT_RESETS, type LimitReset } from "@/lib/auth/schemas";
import { requireDatabaseUrl } from "@/lib/env";
import { prng } from "../helpers/prng";

// eslint-disable-next-line no-restricted-properties -- test knobs, read once here
const knobs = process.env;
const SEED = Number(knobs.SVC_RULES_SEED ?? Date.now() % 2 ** 31);
const CASES = Number(knobs.SVC_RULES_CASES ?? 5_000);
const rng = prng(SEED);
console.log(`key-period-rules: seed ${SEED} (replay with SVC_RULES_SEED=${SEED}), ${CASES} cases per rule`);

const DAY = 86_400_000;
const FROM = Date.UTC(1900, 0, 1);
const TO = Date.UTC(2200, 0, 1);
/** Instants where periods turn: leap days, month and year ends, a Sunday night, the epoch. */
const EDGES = [
  Date.UTC(2000, 1, 29),
  Date.UTC(2024, 1, 29),
  Date.UTC(1900, 2, 1),
  Date.UTC(2100, 2, 1),
  Date.UTC(2026, 10, 30),
  Date.UTC(2026, 11, 31),
  Date.UTC(2027, 0, 1),
  Date.UTC(2026, 10, 29, 23, 59, 59, 999),
  Date.UTC(2026, 10, 30),
  0,
];

let connection: pg.Client;
beforeAll(async () => {
  connection = new pg.Client({ connectionString: requireDatabaseUrl() });
  await connection.connect();
});
afterAll(async () => {
  await connection.end();
});

/**
 * Each statement in a zone with a half-hour offset and daylight saving: a rule that read the session's zone would
 * show here. Set for its own transaction only: the embedded database is one session behind every connection, where
 * a session-wide SET would move every other test file's zone too.
 */
const client = {
  async query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    await connection.query("BEGIN");
    try {
      await connection.query("SET LOCAL TIME ZONE 'America/St_Johns'");
      const result = await connection.query<R>(text, values);
      await connection.query("COMMIT");
      return result;
    } catch (error) {
      await connection.query("ROLLBACK");
      throw error;
    }
  },
};

function randomInstant(): number {
  if (rng.chance(0.3)) {
    // Around the start (or end) of a random instant's period, by a millisecond or so.
    const at = new Date(rng.int(FROM, TO));
    const reset = rng.pick(LIMIT_RESETS);
    const edge = rng.chance(0.5) ? keyPeriodStart(reset, at)! : keyPeriodEnd(reset, at)!;
    return edge.getTime() + rng.pick([-1, 0, 1, -DAY, DAY]);
  }
  if (rng.chance(0.1)) return rng.pick(EDGES) + rng.pick([-1, 0, 1]);
  return rng.int(FROM, TO);
}

const ms = (d: Date | null) => (d === null ? null : String(d.getTime()));
const iso = (t: number) => new Date(t).toISOString();

describe("the key-period rule in SQL and its TypeScript mirror (lib/auth/key-periods.ts)", () => {
  it("period start: the UTC day, the week from Monday, the calendar month; null for a lifetime limit", async () => {
    const cases = Array.from({ length: CASES }, () => ({
      reset: rng.chance(0.05) ? null : rng.pick(LIMIT_RESETS),
      at: randomInstant(),
    }));
    const { rows } = await client.query<{ v: string | null }>(
      `SELECT (extract(epoch FROM svc_key_period_start(r::key_limit_reset, a)) * 1000)::bigint::text AS v
       FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS t(r, a, n) ORDER BY n`,
      [cases.map((c) => c.reset), cases.map((c) => iso(c.at))],
    );
    expect(rows.map((r) => r.v)).toEqual(cases.map((c) => ms(keyPeriodStart(c.reset, new Date(c.at)))));
  });

  it("next reset: the SQL puts the mirror's period end in the next period, and the millisecond before it in this one", async () => {
    const cases = Array.from({ length: CASES }, () => ({ reset: rng.pick(LIMIT_RESETS), at: randomInstant() }));
    const ends = cases.map((c) => keyPeriodEnd(c.reset, new Date(c.at))!.getTime());
    const { rows } = await client.query<{ last: string; next: string }>(
      `SELECT (extract(epoch FROM svc_key_period_start(r::key_limit_reset, e - interval '1 millisecond')) * 1000)::bigint::text AS last,
              (extract(epoch FROM svc_key_period_start(r::key_limit_reset, e)) * 1000)::bigint::text AS next
       FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS t(r, e, n) ORDER BY n`,
      [cases.map((c) => c.reset), ends.map(iso)],
    );
    expect(rows.map((r) => [r.last, r.next])).toEqual(cases.map((c, i) => [ms(keyPeriodStart(c.reset, new Date(c.at))), String(ends[i])]));
    // A day is 24 h, a week 7 days, a month 28 to 31 days.
    for (const [i, c] of cases.entries()) {
      const days = (ends[i] - keyPeriodStart(c.reset, new Date(c.at))!.getTime()) / DAY;
      if (c.reset === "daily") expect(days).toBe(1);
      else if (c.reset === "weekly") expect(days).toBe(7);
      else expect(days >= 28 && days <= 31).toBe(true);
    }
  });

  it("the period's spend: the counter while it counts the current period (or a later one), else 0", async () => {
    const cases = Array.from({ length: CASES }, () => {
      const reset: LimitReset | null = rng.chance(0.05) ? null : rng.pick(LIMIT_RESETS);
      const at = randomInstant();
      const start = keyPeriodStart(reset ?? "daily", new Date(at))!.getTime();
      const periodStart = rng.chance(0.1) ? null : start + rng.pick([0, 0, -1, 1, -DAY, DAY, -7 * DAY, -31 * DAY, 31 * DAY]);
      return { reset, at, periodStart, spent: rng.big(2n ** 63n - 1n) };
    });
    const { rows } = await client.query<{ v: string }>(
      `SELECT svc_key_period_spent_micros(r::key_limit_reset, p, s, a)::text AS v
       FROM unnest($1::text[], $2::timestamptz[], $3::bigint[], $4::timestamptz[]) WITH ORDINALITY AS t(r, p, s, a, n) ORDER BY n`,
      [
        cases.map((c) => c.reset),
        cases.map((c) => (c.periodStart === null ? null : iso(c.periodStart))),
        cases.map((c) => c.spent.toString()),
        cases.map((c) => iso(c.at)),
      ],
    );
    expect(rows.map((r) => r.v)).toEqual(
      cases.map((c) =>
        keyPeriodSpentMicros(c.reset, c.periodStart === null ? null : new Date(c.periodStart), c.spent, new Date(c.at)).toString(),
      ),
    );
  });

  it("is inlined where the reservation calls it (no function call per row)", async () => {
    const { rows } = await client.query<{ "QUERY PLAN": string }>(`
      EXPLAIN (VERBOSE)
      SELECT svc_key_period_spent_micros(k.limit_reset, k.period_start, k.period_spent_micros, now()),
             GREATEST(k.period_start, svc_key_period_start(k.limit_reset, now()))
      FROM api_keys k`);
    const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
    expect(plan).toContain("period_spent_micros");
    expect(plan).not.toMatch(/svc_\w+\(/);
  });
});
