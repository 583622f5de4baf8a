import "server-only";
import { forgetApiKey } from "@/lib/auth/api-key-auth";
import { keyPeriodEnd, keyPeriodSpentMicros, keyPeriodStart } from "@/lib/auth/key-periods";
import type { CurrentKey, LimitReset } from "@/lib/auth/schemas";
import { db } from "@/lib/db/client";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { formatMicros } from "@/lib/money";
import type { ProviderPreferences } from "@/lib/market/provider-schemas";

/**
 * GET /v1/key: the calling key described through its own credential, with OpenRouter's field names for its key endpoint
 * where they mean the same. Read in one statement, so the figures agree with each other:
 * - `usage` is what the key's clears charged: its spend counter less what its active holds reserved (the counter is
 *   charged plus reserved; reading both in one snapshot gives exactly the sum of its clears without scanning them).
 * - `usage_daily`, `_weekly`, `_monthly`: its clears in the current UTC day, week (Monday to Sunday) and month.
 * - `limit_remaining`: the limit less what the key spent against it (its lifetime spend, or its current period's;
 *   holds in flight included, as the reservation counts them), never below 0.
 * The key's row is read afresh: a key revoked or expired since this process cached it learns nothing.
 */
export async function getCurrentKey(apiKeyId: string, now = new Date()): Promise<CurrentKey> {
  const day = window("daily", now);
  const week = window("weekly", now);
  const month = window("monthly", now);
  const from = new Date(Math.min(week.start.getTime(), month.start.getTime()));
  const to = new Date(Math.max(week.end.getTime(), month.end.getTime()));
  const [row] = await db.$queryRaw<KeyRow[]>`
    SELECT k."id"::text AS id, k."name", k."prefix", k."key_hash", k."spend_limit_micros", k."limit_reset"::text AS limit_reset,
           k."period_start", k."period_spent_micros", k."spent_micros", k."max_price_cents", k."expires_at", k."created_at",
           k."revoked_at", k."provider_preferences",
           (SELECT COALESCE(SUM(h."amount_micros"), 0) FROM "holds" h WHERE h."api_key_id" = k."id" AND h."status" = 'active')::bigint AS held_micros,
           u.daily, u.weekly, u.monthly
    FROM "api_keys" k
    CROSS JOIN LATERAL (
      SELECT COALESCE(SUM(cl."charge_micros") FILTER (WHERE c."created_at" >= ${day.start}::timestamptz AND c."created_at" < ${day.end}::timestamptz), 0)::bigint AS daily,
             COALESCE(SUM(cl."charge_micros") FILTER (WHERE c."created_at" >= ${week.start}::timestamptz AND c."created_at" < ${week.end}::timestamptz), 0)::bigint AS weekly,
             COALESCE(SUM(cl."charge_micros") FILTER (WHERE c."created_at" >= ${month.start}::timestamptz AND c."created_at" < ${month.end}::timestamptz), 0)::bigint AS monthly
      FROM "completions" c JOIN "clears" cl ON cl."completion_id" = c."id"
      WHERE c."account_id" = k."account_id" AND c."api_key_id" = k."id" AND c."created_at" >= ${from}::timestamptz AND c."created_at" < ${to}::timestamptz
    ) u
    WHERE k."id" = ${apiKeyId}::uuid`;
  if (!row || row.revoked_at || (row.expires_at && row.expires_at <= now)) {
    if (row) forgetApiKey(row.key_hash);
    throw new AppError("invalid_api_key", "This API key is unknown, revoked or expired.");
  }
  const reset = row.limit_reset as LimitReset | null;
  const limit = row.spend_limit_micros === null ? null : BigInt(row.spend_limit_micros);
  const spentAgainstLimit =
    reset === null ? BigInt(row.spent_micros) : keyPeriodSpentMicros(reset, row.period_start, BigInt(row.period_spent_micros), now);
  const remaining = limit === null ? null : limit > spentAgainstLimit ? limit - spentAgainstLimit : 0n;
  return {
    object: "key",
    data: {
      id: row.id,
      name: row.name,
      prefix: row.prefix,
      limit: limit === null ? null : formatMicros(limit),
      limit_remaining: remaining === null ? null : formatMicros(remaining),
      limit_reset: reset,
      limit_resets_at: keyPeriodEnd(reset, now)?.toISOString() ?? null,
      usage: formatMicros(BigInt(row.spent_micros) - BigInt(row.held_micros)),
      usage_daily: formatMicros(BigInt(row.daily)),
      usage_weekly: formatMicros(BigInt(row.weekly)),
      usage_monthly: formatMicros(BigInt(row.monthly)),
      max_price_cents: row.max_price_cents,
      provider_preferences: row.provider_preferences,
      expires_at: row.expires_at?.toISOString() ?? null,
      created_at: row.created_at.toISOString(),
      rate_limit: { requests: env.RATE_LIMIT_PER_KEY_PER_MINUTE, interval: "60s" },
    },
  };
}

type KeyRow = {
  id: string;
  name: string;
  prefix: string;
  key_hash: string;
  spend_limit_micros: bigint | string | null;
  limit_reset: string | null;
  period_start: Date | null;
  period_spent_micros: bigint | string;
  spent_micros: bigint | string;
  max_price_cents: number | null;
  provider_preferences: ProviderPreferences | null;
  expires_at: Date | null;
  created_at: Date;
  revoked_at: Date | null;
  held_micros: bigint | string;
  daily: bigint | string;
  weekly: bigint | string;
  monthly: bigint | string;
};

/** The UTC day, week or month that holds `now`, as [start, end). */
function window(reset: LimitReset, now: Date): { start: Date; end: Date } {
  return { start: keyPeriodStart(reset, now)!, end: keyPeriodEnd(reset, now)! };
}

/**
 * A resetting limit's period as of `now`, for the refusal that names it (spend_limit_exceeded): its kind, what the
 * period has spent and when it resets; null for a lifetime limit. Read only on that refusal, never on the success path.
 */
export async function getKeyLimitPeriod(
  apiKeyId: string,
  now = new Date(),
): Promise<{ reset: LimitReset; spentMicros: bigint; resetsAt: Date } | null> {
  const key = await db.apiKey.findUnique({
    where: { id: apiKeyId },
    select: { limitReset: true, periodStart: true, periodSpentMicros: true },
  });
  if (!key?.limitReset) return null;
  const reset: LimitReset = key.limitReset;
  return {
    reset,
    spentMicros: keyPeriodSpentMicros(reset, key.periodStart, key.periodSpentMicros, now),
    resetsAt: keyPeriodEnd(reset, now)!,
  };
}
