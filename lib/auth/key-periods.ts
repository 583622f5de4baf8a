import "server-only";
import type { LimitReset } from "@/lib/auth/schemas";

/**
 * The period of a key's resetting spend limit, in UTC: a day, a week from Monday 00:00, or a calendar month. The rule
 * is SQL (prisma/functions/svc_key_period_start.sql, svc_key_period_spent_micros.sql: the reservation holds the limit
 * with them); these are their mirrors for the views (the period's spend, when it resets), held to the SQL by a seeded
 * randomized test (tests/integration/key-period-rules.test.ts). A lifetime limit (reset null) has no period.
 */

const DAY_MS = 86_400_000;

/** The start of the period that holds `at`. Mirror of svc_key_period_start. */
export function keyPeriodStart(reset: LimitReset | null, at: Date): Date | null {
  if (reset === null) return null;
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  if (reset === "monthly") return utc(y, m, 1);
  const day = utc(y, m, at.getUTCDate());
  if (reset === "daily") return day;
  // getUTCDay(): 0 is Sunday; weeks start on Monday (ISO 8601, as PostgreSQL's date_trunc('week')).
  return new Date(day.getTime() - ((at.getUTCDay() + 6) % 7) * DAY_MS);
}

/** When the period that holds `at` ends: the limit's next reset. */
export function keyPeriodEnd(reset: LimitReset | null, at: Date): Date | null {
  const start = keyPeriodStart(reset, at);
  if (start === null) return null;
  const y = start.getUTCFullYear();
  const m = start.getUTCMonth();
  const d = start.getUTCDate();
  return reset === "monthly" ? utc(y, m + 1, 1) : reset === "weekly" ? utc(y, m, d + 7) : utc(y, m, d + 1);
}

/**
 * What the key has spent in the period that holds `at`, from its counter: the counter when it counts that period (or
 * a later one), else 0. Mirror of svc_key_period_spent_micros.
 */
export function keyPeriodSpentMicros(reset: LimitReset | null, periodStart: Date | null, periodSpentMicros: bigint, at: Date): bigint {
  const start = keyPeriodStart(reset, at);
  return start !== null && periodStart !== null && periodStart.getTime() >= start.getTime() ? periodSpentMicros : 0n;
}

function utc(year: number, month: number, day: number): Date {
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0..99 to 1900..1999.
  date.setUTCFullYear(year, month, day);
  return date;
}
