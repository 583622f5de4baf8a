import "server-only";
import { z } from "zod";
import { db } from "@/lib/db/client";
import { decodeCursor, encodeCursor, PageQuery } from "@/lib/pagination";
import { formatMicros } from "@/lib/money";
import { completionIdOf, givenIdOf } from "@/lib/wire";
import type { DailySpendList, UsagePage } from "@/lib/account/schemas";

/** GET /v1/account/usage: a page, or only the completion an id names (either id the buyer may hold). */
export const UsageQuery = PageQuery.extend({
  id: z
    .string()
    .regex(/^(chatcmpl-|resp_)[A-Za-z0-9]{1,64}$/, "must be a completion id (chatcmpl-…) or a response id (resp_…)")
    .optional()
    .describe("Only the completion with this id: its chatcmpl-…, or the resp_… of a POST /v1/responses answer"),
});

const CURSOR = /^(\d{1,15}):(chatcmpl-[A-Za-z0-9]{1,64})$/;

/**
 * One page of the account's completions, newest first (the completions index is (account_id, created_at)), each under
 * the id its buyer was given (resp_… for a POST /v1/responses answer); with `id`, only the completion it names.
 */
export async function listUsage(accountId: string, page: { cursor?: string; limit: number; id?: string }): Promise<UsagePage> {
  const before = page.cursor ? decodeCursor(page.cursor, CURSOR) : null;
  const rows = await db.completion.findMany({
    where: {
      accountId,
      ...(page.id !== undefined && { id: completionIdOf(page.id) }),
      ...(before && {
        OR: [{ createdAt: { lt: new Date(Number(before[1])) } }, { createdAt: new Date(Number(before[1])), id: { lt: before[2] } }],
      }),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: page.limit + 1,
    include: { clear: true, apiKey: { select: { id: true, name: true, prefix: true } } },
  });
  const data = rows.slice(0, page.limit).map((c) => ({
    id: givenIdOf(c.id, c.responsesApi),
    completion_id: c.id,
    created_at: c.createdAt.toISOString(),
    key: c.apiKey,
    model: c.modelId,
    prompt_tokens: c.promptTokens,
    completion_tokens: c.completionTokens,
    cached_tokens: c.cachedTokens,
    usage_estimated: c.usageEstimated,
    burn: formatMicros(c.clear?.burnMicroDiem ?? 0n),
    price_cents: c.clear?.priceCents ?? 0,
    cost: formatMicros(c.clear?.chargeMicros ?? 0n),
    latency_ms: c.latencyMs,
  }));
  const last = rows.length > page.limit ? rows[page.limit - 1] : undefined;
  return { object: "list", data, next_cursor: last ? encodeCursor(`${last.createdAt.getTime()}:${last.id}`) : null };
}

/** Spend per UTC day over the last `days` days (for the dashboard's chart); days without use are omitted. */
export async function listDailySpend(accountId: string, days: number, now = new Date()): Promise<DailySpendList> {
  const since = new Date(now.getTime() - days * 86_400_000);
  const rows = await db.$queryRaw<{ day: string; requests: bigint; cost: bigint; burn: bigint }[]>`
    SELECT to_char(date_trunc('day', c.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day,
           COUNT(*) AS requests, COALESCE(SUM(cl.charge_micros), 0)::bigint AS cost, COALESCE(SUM(cl.burn_micro_diem), 0)::bigint AS burn
    FROM completions c JOIN clears cl ON cl.completion_id = c.id
    WHERE c.account_id = ${accountId}::uuid AND c.created_at >= ${since}::timestamptz
    GROUP BY 1 ORDER BY 1`;
  return {
    object: "list",
    data: rows.map((r) => ({
      day: r.day,
      requests: Number(r.requests),
      cost: formatMicros(BigInt(r.cost)),
      burn: formatMicros(BigInt(r.burn)),
    })),
  };
}
