import "server-only";
import { db } from "@/lib/db";
import { env } from "@/lib/env";
import type { Features } from "@/lib/router/features";

/**
 * Thin wrappers over the hot-path SQL functions (prisma/migrations/*_completion_hot_path): each is one
 * round trip and one transaction, which is what keeps the completion path exact under concurrency.
 */

export type Upstream = { baseUrl: string; keyCiphertext: string; model: string };

export type Reservation =
  | { status: "ok"; holdId: string; offerId: string; priceCents: number; amountMicros: bigint; upstream: Upstream }
  | { status: "insufficient_balance" | "spend_limit_exceeded"; offerId: string; priceCents: number; amountMicros: bigint }
  | { status: "no_offer" };

type ReserveRow = {
  status: string;
  hold_id: string | null;
  offer_id: string | null;
  price_cents: number | null;
  amount_micros: bigint | null;
  upstream_base_url: string | null;
  upstream_key_ciphertext: string | null;
  upstream_model: string | null;
};

export async function reserveCompletion(input: {
  accountId: string;
  apiKeyId: string;
  modelId: string;
  maxPriceCents: number;
  burnMicroDiem: bigint;
  /** Only offers that serve every feature the request uses. */
  features: Features;
  now: Date;
  expiresAt: Date;
}): Promise<Reservation> {
  const { tools, json_schema, vision } = input.features;
  const [row] = await db.$queryRaw<ReserveRow[]>`
    SELECT * FROM svc_reserve_completion(${input.accountId}::uuid, ${input.apiKeyId}::uuid, ${input.modelId},
      ${input.maxPriceCents}::int, ${input.burnMicroDiem}::bigint, ${input.now}::timestamptz, ${input.expiresAt}::timestamptz,
      ${tools}, ${json_schema}, ${vision})`;
  if (row.status === "no_offer") return { status: "no_offer" };
  const common = { offerId: row.offer_id!, priceCents: row.price_cents!, amountMicros: BigInt(row.amount_micros!) };
  if (row.status === "ok") {
    const upstream = { baseUrl: row.upstream_base_url!, keyCiphertext: row.upstream_key_ciphertext!, model: row.upstream_model! };
    return { status: "ok", holdId: row.hold_id!, ...common, upstream };
  }
  return { status: row.status as "insufficient_balance" | "spend_limit_exceeded", ...common };
}

export type ClearResult = { chargeMicros: bigint; burnMicroDiem: bigint; priceCents: number; balanceMicros: bigint };

export async function clearCompletion(input: {
  holdId: string;
  completionId: string;
  promptTokens: number;
  completionTokens: number;
  usageEstimated: boolean;
  /** What the upstream claimed (null when it sent no usage) and whether it exceeded our count beyond the tolerance. */
  claimed: { promptTokens: number; completionTokens: number } | null;
  usageDisputed: boolean;
  latencyMs: number;
  burnMicroDiem: bigint;
  now: Date;
}): Promise<ClearResult> {
  const [row] = await db.$queryRaw<{ charge_micros: bigint; burn_micro_diem: bigint; price_cents: number; balance_micros: bigint }[]>`
    SELECT * FROM svc_clear_completion(${input.holdId}::uuid, ${input.completionId}, ${input.promptTokens}::int,
      ${input.completionTokens}::int, ${input.usageEstimated}, ${input.latencyMs}::int, ${input.burnMicroDiem}::bigint,
      ${env.PLATFORM_FEE_BPS}::int, ${input.now}::timestamptz, ${input.claimed?.promptTokens ?? null}::int,
      ${input.claimed?.completionTokens ?? null}::int, ${input.usageDisputed})`;
  return {
    chargeMicros: BigInt(row.charge_micros),
    burnMicroDiem: BigInt(row.burn_micro_diem),
    priceCents: Number(row.price_cents),
    balanceMicros: BigInt(row.balance_micros),
  };
}

/** Releases an active hold; false when it was already cleared or released (idempotent). */
export async function releaseHold(holdId: string, now = new Date()): Promise<boolean> {
  const [row] = await db.$queryRaw<{ released: boolean }[]>`
    SELECT svc_release_hold(${holdId}::uuid, ${now}::timestamptz) AS released`;
  return row.released;
}

/** Releases every hold past its deadline (a crash between reserve and clear must not strand money). */
export async function sweepExpiredHolds(now = new Date(), batch = 500): Promise<number> {
  const expired = await db.hold.findMany({
    where: { status: "active", expiresAt: { lt: now } },
    select: { id: true },
    take: batch,
  });
  let released = 0;
  for (const { id } of expired) if (await releaseHold(id, now)) released += 1;
  return released;
}
